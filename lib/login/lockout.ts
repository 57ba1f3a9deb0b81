import type { LockoutPolicy } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { sha256 } from "@/lib/crypto";
import { addressForLimits } from "@/lib/http/client-address";
import { countFailures, deleteFailures, deleteLock, getLock, insertFailure, liveLockUntil, putLock } from "@/lib/store/lockouts";

/**
 * Fair lockout, as OWASP's authentication cheat sheet and mature providers advise. Three counts
 * of failed password checks, each over a sliding window (`policy.windowSeconds` back from now,
 * never aligned to the clock):
 *
 * - per account and address: after `freeFailures`, each further try waits 1 s, 2 s, 4 s… (up to
 *   `maxDelaySeconds`) after the latest failure. This slows one guesser without stopping anyone else.
 * - per address, over all accounts: the same after `addressFreeFailures` (password spraying). An
 *   address is often shared (NAT, proxies), so this only slows, and a browser that has signed in
 *   to the account before (device cookie) is exempt from it.
 * - per account, from browsers without its device cookie: after `lockAfterFailures` the account is
 *   locked for `lockSeconds` for such browsers only. Its owner, in a browser that signed in
 *   before, keeps signing in; an administrator sees and lifts the lock.
 *
 * Tries refused by a delay or the lock check no password and count nothing, so the number of
 * stored failures is bounded by the delays. Unknown login names are counted and locked exactly
 * like known ones, so no answer says whether a name exists.
 */

/** A known user is counted by id; an unknown name by its normalised form (see lockoutName). */
export function accountKeyOf(userId: string | undefined, loginName: string, primaryDomain: string): string {
  return userId ? `user:${userId}` : `name:${sha256(lockoutName(loginName, primaryDomain))}`;
}

/**
 * `carol` and `carol@<primaryDomain>` sign in the same user (findUserByLoginName), so for an
 * unknown name they share one count too, as they would if the name existed.
 */
function lockoutName(loginName: string, primaryDomain: string): string {
  const name = loginName.trim().toLowerCase();
  const suffix = "@" + primaryDomain.toLowerCase();
  return primaryDomain && name.endsWith(suffix) ? name.slice(0, -suffix.length) : name;
}

/** Who tries: the account as counted, the client address, and whether the browser is trusted for it. */
export type Attempt = { accountKey: string; address: string; trusted: boolean };

/** The attempt with its address as the counts take it (an IPv6 address's /64: addressForLimits). */
const counted = <A extends Attempt>(a: A): A => ({ ...a, address: addressForLimits(a.address) });

export type Verdict =
  | { allowed: true }
  | { allowed: false; reason: "throttled" | "accountLocked"; retryAfterSeconds: number };

/** The wait after `failures` failures in the window: none for the free ones, then doubling. */
export function delaySeconds(failures: number, free: number, maxDelay: number): number {
  if (failures < free) return 0;
  return Math.min(maxDelay, 2 ** Math.min(failures - free, 30));
}

const windowStart = (policy: LockoutPolicy, now: Date) => new Date(now.getTime() - policy.windowSeconds * 1000);

function waitLeft(f: { n: number; latest: Date | null }, free: number, policy: LockoutPolicy, now: Date): number {
  const d = delaySeconds(f.n, free, policy.maxDelaySeconds);
  if (!d || !f.latest) return 0;
  return Math.max(0, Math.ceil((f.latest.getTime() + d * 1000 - now.getTime()) / 1000));
}

/** Whether this try may check a password now; if not, why and for how long. */
export async function attemptVerdict(db: Executor, policy: LockoutPolicy, attempt: Attempt, now: Date): Promise<Verdict> {
  const a = counted(attempt);
  const inWindow = { since: windowStart(policy, now), until: now };
  const pair = await countFailures(db, { ...inWindow, accountKey: a.accountKey, address: a.address });
  let wait = waitLeft(pair, policy.freeFailures, policy, now);
  if (!a.trusted) {
    const byAddress = await countFailures(db, { ...inWindow, address: a.address });
    wait = Math.max(wait, waitLeft(byAddress, policy.addressFreeFailures, policy, now));
  }
  if (wait > 0) return { allowed: false, reason: "throttled", retryAfterSeconds: wait };
  if (!a.trusted) {
    const lock = await liveLockUntil(db, a.accountKey, now);
    if (lock) return { allowed: false, reason: "accountLocked", retryAfterSeconds: Math.max(1, Math.ceil((lock.getTime() - now.getTime()) / 1000)) };
  }
  return { allowed: true };
}

/**
 * Counts a failed password check. Returns the lock's end when this failure locked the account
 * (the caller audits `user.lockout`). A lock takes the failures that caused it with it, so that
 * once it ends the account starts afresh rather than being locked again by the next failure.
 */
export async function recordFailure(
  db: Executor,
  policy: LockoutPolicy,
  attempt: Attempt & { userId?: string },
  now: Date,
): Promise<{ lockedUntil: Date } | undefined> {
  const a = counted(attempt);
  await insertFailure(db, a, now);
  if (a.trusted) return undefined;
  const { n } = await countFailures(db, { since: windowStart(policy, now), until: now, accountKey: a.accountKey, untrustedOnly: true });
  if (n < policy.lockAfterFailures) return undefined;
  const lockedUntil = new Date(now.getTime() + policy.lockSeconds * 1000);
  await putLock(db, { accountKey: a.accountKey, userId: a.userId ?? null, lockedAt: now, lockedUntil });
  await deleteFailures(db, { accountKey: a.accountKey, untrustedOnly: true });
  return { lockedUntil };
}

/** After a successful sign-in, the failures of that account from that address are forgotten. */
export async function clearFailures(db: Executor, attempt: Attempt): Promise<void> {
  const a = counted(attempt);
  await deleteFailures(db, { accountKey: a.accountKey, address: a.address });
}

export type UserLockout = { locked: boolean; lockedAt: Date | null; lockedUntil: Date | null; recentFailures: number };

/** What an administrator sees of a user's lock and the failures counting toward the next one. */
export async function userLockout(db: Executor, policy: LockoutPolicy, userId: string, now: Date): Promise<UserLockout> {
  const key = accountKeyOf(userId, "", "");
  const lock = await getLock(db, key);
  const live = lock && lock.lockedUntil.getTime() > now.getTime() ? lock : undefined;
  const { n } = await countFailures(db, { since: windowStart(policy, now), until: now, accountKey: key, untrustedOnly: true });
  return { locked: !!live, lockedAt: live?.lockedAt ?? null, lockedUntil: live?.lockedUntil ?? null, recentFailures: n };
}

/** Lifts a user's lock and forgets the failures that would count toward the next; true if it was locked. */
export async function liftUserLockout(db: Executor, userId: string, now: Date): Promise<boolean> {
  const key = accountKeyOf(userId, "", "");
  const lifted = await deleteLock(db, key, now);
  await deleteFailures(db, { accountKey: key });
  return lifted;
}
