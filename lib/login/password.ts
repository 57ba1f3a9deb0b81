import type { LockoutPolicy } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import type { Memo } from "@/lib/cache/memo";
import { dummyPasswordHash, verifyPassword } from "@/lib/passwords";
import { findUserByLoginName, getPasswordHash, type User } from "@/lib/store/users";
import { accountKeyOf, attemptVerdict, clearFailures, recordFailure, type Attempt } from "./lockout";

export type PasswordCheck =
  | { ok: true; user: User }
  | { ok: false; reason: "invalid"; lockedUser?: { id: string; until: Date } }
  | { ok: false; reason: "throttled" | "accountLocked"; retryAfterSeconds: number }
  | { ok: false; reason: "userLocked" };

/**
 * Checks a login name and password under the lockout policy (lib/login/lockout.ts). An unknown
 * name, a machine user and a user without a password all cost one argon2 verification and answer
 * "invalid", exactly like a wrong password. `trustedUserIds` are the users this browser's device
 * cookie names. When this failure locked a known user, `lockedUser` says so for the audit log.
 */
export async function checkPassword(
  db: Executor,
  opts: {
    loginName: string;
    password: string;
    address: string;
    policy: LockoutPolicy;
    primaryDomain: string;
    trustedUserIds?: string[];
    now: Date;
    /** The engine's memo, which holds the dummy hash unknown names are checked against. */
    memo: Memo;
  },
): Promise<PasswordCheck> {
  const now = opts.now;
  const user = opts.loginName.length <= 320 ? await findUserByLoginName(db, opts.loginName, opts.primaryDomain) : undefined;
  const attempt: Attempt = {
    accountKey: accountKeyOf(user?.id, opts.loginName, opts.primaryDomain),
    address: opts.address,
    trusted: !!user && (opts.trustedUserIds ?? []).includes(user.id),
  };
  const verdict = await attemptVerdict(db, opts.policy, attempt, now);
  if (!verdict.allowed) return { ok: false, reason: verdict.reason, retryAfterSeconds: verdict.retryAfterSeconds };

  const hash = user && user.type === "human" ? await getPasswordHash(db, user.id) : undefined;
  const valid = await verifyPassword(hash ?? (await dummyPasswordHash(opts.memo)), opts.password.slice(0, 1024));
  if (!valid || !hash || !user) {
    const locked = await recordFailure(db, opts.policy, { ...attempt, userId: user?.id }, now);
    return { ok: false, reason: "invalid", ...(locked && user ? { lockedUser: { id: user.id, until: locked.lockedUntil } } : {}) };
  }
  // Only someone who knows the password learns that the account is locked by an administrator.
  if (user.locked) return { ok: false, reason: "userLocked" };
  await clearFailures(db, attempt);
  return { ok: true, user };
}
