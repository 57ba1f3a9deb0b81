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
