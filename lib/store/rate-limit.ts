import { sql } from "drizzle-orm";
import { resultRows, type Executor } from "@/lib/db/client";

export type RateLimitResult = { allowed: boolean; count: number; limit: number; retryAfterSeconds: number };

/**
 * Fixed-window counter in the database, so that every instance counts against the same limit.
 * One upsert per call: it starts a new window when the stored one has passed, else increments.
 * (Hand-written rather than a rate-limit library: the libraries' PostgreSQL stores expect a pg
 * pool and their own tables, and this must run the same on embedded PGlite.)
 */
export async function hitRateLimit(
  db: Executor,
  key: string,
  limit: number,
  windowSeconds: number,
  now: Date,
  /** Events to count at once (an instance reporting what it counted locally, lib/http/token-throttle.ts). */
  increment = 1,
): Promise<RateLimitResult> {
  const windowMs = windowSeconds * 1000;
  const windowStart = new Date(Math.floor(now.getTime() / windowMs) * windowMs);
  const expiresAt = new Date(windowStart.getTime() + windowMs);
  const rows = await db.execute<{ count: number }>(sql`
    INSERT INTO rate_limit_counters (key, window_start, count, expires_at)
    VALUES (${key}, ${windowStart.toISOString()}, ${increment}, ${expiresAt.toISOString()})
    ON CONFLICT (key) DO UPDATE SET
      count = CASE WHEN rate_limit_counters.window_start = excluded.window_start THEN rate_limit_counters.count + excluded.count ELSE excluded.count END,
      window_start = excluded.window_start,
      expires_at = excluded.expires_at
    RETURNING count`);
  // PostgreSQL returns the integer column as a number on both drivers.
  const count = resultRows<{ count: number }>(rows)[0]?.count ?? 0;
  return {
    allowed: count <= limit,
    count,
    limit,
    retryAfterSeconds: Math.max(1, Math.ceil((expiresAt.getTime() - now.getTime()) / 1000)),
  };
}

/**
 * A cooldown: the first caller for `key` gets it for `seconds` (allowed), every other caller
 * until then is refused with the seconds left. One conditional upsert, so that two callers at the
 * same moment (on any instance) cannot both get it: PostgreSQL locks the row for the second one,
 * which then sees the first one's expiry. Unlike `hitRateLimit`'s fixed windows, the period
 * starts at the allowed call, so no window boundary lets two calls through a moment apart.
 */
export async function claimCooldown(db: Executor, key: string, seconds: number, now: Date): Promise<RateLimitResult> {
  const expiresAt = new Date(now.getTime() + seconds * 1000);
  const claimed = resultRows<{ count: number }>(
    await db.execute(sql`
      INSERT INTO rate_limit_counters (key, window_start, count, expires_at)
      VALUES (${key}, ${now.toISOString()}, 1, ${expiresAt.toISOString()})
      ON CONFLICT (key) DO UPDATE SET window_start = excluded.window_start, count = 1, expires_at = excluded.expires_at
      WHERE rate_limit_counters.expires_at <= excluded.window_start
      RETURNING count`),
  );
  if (claimed.length) return { allowed: true, count: 1, limit: 1, retryAfterSeconds: 0 };
  const held = resultRows<{ expires_at: string | Date }>(await db.execute(sql`SELECT expires_at FROM rate_limit_counters WHERE key = ${key}`))[0];
  const until = held ? new Date(held.expires_at).getTime() : expiresAt.getTime();
  return { allowed: false, count: 2, limit: 1, retryAfterSeconds: Math.max(1, Math.ceil((until - now.getTime()) / 1000)) };
}
