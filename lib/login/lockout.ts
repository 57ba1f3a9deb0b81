import { and, eq } from "drizzle-orm";
import { rateLimitCounters, type LockoutPolicy } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { sha256 } from "@/lib/crypto";
import { hitRateLimit } from "@/lib/store/rate-limit";

/**
 * Failed sign-ins are counted per login name (whether or not it exists, so a lockout says
 * nothing about existence) and per address. An address is often shared by many people (NAT,
 * proxies), so it may fail ten times as often before it is stopped; the per-name limit is what
 * protects one account.
 */
export const ADDRESS_FACTOR = 10;

/**
 * The name as counted: `carol` and `carol@<primaryDomain>` sign in the same user
 * (findUserByLoginName), so they share one counter, or alternating them would double the
 * failures allowed. Derived from the name alone, never from a user lookup, so that unknown names
 * count exactly like known ones. A username that itself ends in `@<primaryDomain>` thus shares
 * the counter of the name without it: that can only lock out sooner, never later.
 */
function lockoutName(loginName: string, primaryDomain: string): string {
  const name = loginName.trim().toLowerCase();
  const suffix = "@" + primaryDomain.toLowerCase();
  return primaryDomain && name.endsWith(suffix) ? name.slice(0, -suffix.length) : name;
}

/** Who tries to sign in: the name as typed, the instance's primary domain, the client address. */
export type Attempt = { loginName: string; primaryDomain: string; address: string };

function keys(a: Attempt) {
  return {
    name: `lockout:name:${sha256(lockoutName(a.loginName, a.primaryDomain))}`,
    address: `lockout:addr:${a.address}`,
  };
}

function windowStart(now: Date, windowSeconds: number): Date {
  const ms = windowSeconds * 1000;
  return new Date(Math.floor(now.getTime() / ms) * ms);
}

async function failures(db: Executor, key: string, start: Date): Promise<number> {
  const [row] = await db
    .select({ count: rateLimitCounters.count })
    .from(rateLimitCounters)
    .where(and(eq(rateLimitCounters.key, key), eq(rateLimitCounters.windowStart, start)));
  return row?.count ?? 0;
}

export type LockoutState = { locked: false } | { locked: true; retryAfterSeconds: number };

export async function lockoutState(db: Executor, policy: LockoutPolicy, attempt: Attempt, now = new Date()): Promise<LockoutState> {
  const k = keys(attempt);
  const start = windowStart(now, policy.windowSeconds);
  const [byName, byAddress] = await Promise.all([failures(db, k.name, start), failures(db, k.address, start)]);
  if (byName >= policy.maxFailures || byAddress >= policy.maxFailures * ADDRESS_FACTOR) {
    return { locked: true, retryAfterSeconds: Math.ceil((start.getTime() + policy.windowSeconds * 1000 - now.getTime()) / 1000) };
  }
  return { locked: false };
}

export async function recordFailure(db: Executor, policy: LockoutPolicy, attempt: Attempt, now = new Date()): Promise<void> {
  const k = keys(attempt);
  await hitRateLimit(db, k.name, policy.maxFailures, policy.windowSeconds, now);
  await hitRateLimit(db, k.address, policy.maxFailures * ADDRESS_FACTOR, policy.windowSeconds, now);
}
