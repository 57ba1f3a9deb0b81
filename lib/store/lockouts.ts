import { and, count, eq, gt, lte, max, type SQL } from "drizzle-orm";
import { accountLockouts, loginFailures } from "@/db/schema";
import type { Executor } from "@/lib/db/client";

/**
 * Storage of the lockout policy (lib/login/lockout.ts decides; this only counts and records):
 * failed password or second-factor checks, and account locks.
 */

/** Which failures to count: in `(since, until]`, of an account and/or an address, optionally only untrusted browsers'. */
export type FailureFilter = { since: Date; until: Date; accountKey?: string; address?: string; untrustedOnly?: boolean };

export async function countFailures(db: Executor, f: FailureFilter): Promise<{ n: number; latest: Date | null }> {
  const conds: SQL[] = [gt(loginFailures.at, f.since), lte(loginFailures.at, f.until)];
  if (f.accountKey !== undefined) conds.push(eq(loginFailures.accountKey, f.accountKey));
  if (f.address !== undefined) conds.push(eq(loginFailures.address, f.address));
  if (f.untrustedOnly) conds.push(eq(loginFailures.trusted, false));
  const [row] = await db.select({ n: count(), latest: max(loginFailures.at) }).from(loginFailures).where(and(...conds));
  return { n: row?.n ?? 0, latest: row?.latest ? new Date(row.latest) : null };
}

export async function insertFailure(db: Executor, a: { accountKey: string; address: string; trusted: boolean }, at: Date): Promise<void> {
  await db.insert(loginFailures).values({ accountKey: a.accountKey, address: a.address, trusted: a.trusted, at });
}

/** Forgets an account's failures: all, those from one address, or those of untrusted browsers. */
export async function deleteFailures(db: Executor, f: { accountKey: string; address?: string; untrustedOnly?: boolean }): Promise<void> {
  const conds: SQL[] = [eq(loginFailures.accountKey, f.accountKey)];
  if (f.address !== undefined) conds.push(eq(loginFailures.address, f.address));
  if (f.untrustedOnly) conds.push(eq(loginFailures.trusted, false));
  await db.delete(loginFailures).where(and(...conds));
}

/** The end of the account's lock when it is still running at `now`. */
export async function liveLockUntil(db: Executor, accountKey: string, now: Date): Promise<Date | undefined> {
  const [row] = await db
    .select({ until: accountLockouts.lockedUntil })
    .from(accountLockouts)
    .where(and(eq(accountLockouts.accountKey, accountKey), gt(accountLockouts.lockedUntil, now)));
  return row?.until;
}

export async function getLock(db: Executor, accountKey: string): Promise<{ lockedAt: Date; lockedUntil: Date } | undefined> {
  const [lock] = await db.select().from(accountLockouts).where(eq(accountLockouts.accountKey, accountKey));
  return lock;
}

export async function putLock(db: Executor, l: { accountKey: string; userId: string | null; lockedAt: Date; lockedUntil: Date }): Promise<void> {
  await db
    .insert(accountLockouts)
    .values(l)
    .onConflictDoUpdate({ target: accountLockouts.accountKey, set: { lockedAt: l.lockedAt, lockedUntil: l.lockedUntil } });
}

/** Removes the account's lock; true when it was still running at `now`. */
export async function deleteLock(db: Executor, accountKey: string, now: Date): Promise<boolean> {
  const live = await db
    .delete(accountLockouts)
    .where(and(eq(accountLockouts.accountKey, accountKey), gt(accountLockouts.lockedUntil, now)))
    .returning({ key: accountLockouts.accountKey });
  await db.delete(accountLockouts).where(eq(accountLockouts.accountKey, accountKey));
  return live.length > 0;
}

/** Maintenance: failures up to `failuresBefore` and locks ended by `now`. */
export async function purgeLockouts(db: Executor, failuresBefore: Date, now: Date): Promise<void> {
  await db.delete(loginFailures).where(lte(loginFailures.at, failuresBefore));
  await db.delete(accountLockouts).where(lte(accountLockouts.lockedUntil, now));
}
