import type { LockoutPolicy } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { dummyPasswordHash, verifyPassword } from "@/lib/passwords";
import { findUserByLoginName, getPasswordHash, type User } from "@/lib/store/users";
import { lockoutState, recordFailure } from "./lockout";

export type PasswordCheck =
  | { ok: true; user: User }
  | { ok: false; reason: "invalid" }
  | { ok: false; reason: "lockedOut"; retryAfterSeconds: number }
  | { ok: false; reason: "userLocked" };

/**
 * Checks a login name and password. An unknown name, a machine user and a user without a
 * password all cost one argon2 verification and answer "invalid", exactly like a wrong password.
 */
export async function checkPassword(
  db: Executor,
  opts: { loginName: string; password: string; address: string; policy: LockoutPolicy; primaryDomain: string },
): Promise<PasswordCheck> {
  const lock = await lockoutState(db, opts.policy, opts);
  if (lock.locked) return { ok: false, reason: "lockedOut", retryAfterSeconds: lock.retryAfterSeconds };

  const user = opts.loginName.length <= 320 ? await findUserByLoginName(db, opts.loginName, opts.primaryDomain) : undefined;
  const hash = user && user.type === "human" ? await getPasswordHash(db, user.id) : undefined;
  const valid = await verifyPassword(hash ?? (await dummyPasswordHash()), opts.password.slice(0, 1024));
  if (!valid || !hash || !user) {
    await recordFailure(db, opts.policy, opts);
    return { ok: false, reason: "invalid" };
  }
  // Only someone who knows the password learns that the account is locked.
  if (user.locked) return { ok: false, reason: "userLocked" };
  return { ok: true, user };
}
