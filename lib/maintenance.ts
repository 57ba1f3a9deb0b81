import { sql } from "drizzle-orm";
import type { Executor } from "@/lib/db/client";
import { purgeExpiredAuthRequests } from "@/lib/store/auth-requests";

/**
 * Deletes rows that can no longer affect any decision: ended rate-limit windows, replay-guard
 * `jti`s past their assertion's expiry, revocations of tokens that have expired anyway, and
 * authorization codes a day after they expired (kept that long so that a late replay is still
 * recognised as one and its tokens revoked).
 */
export async function purgeExpiredRows(db: Executor, now = new Date()): Promise<void> {
  const t = now.toISOString();
  const dayAgo = new Date(now.getTime() - 86_400_000).toISOString();
  await db.execute(sql`DELETE FROM rate_limit_counters WHERE expires_at < ${t}`);
  await db.execute(sql`DELETE FROM used_jtis WHERE expires_at < ${t}`);
  await db.execute(sql`DELETE FROM token_revocations WHERE expires_at < ${t}`);
  await db.execute(sql`DELETE FROM authorization_codes WHERE expires_at < ${dayAgo}`);
  // Pending sign-ins nobody finished (their id in a login URL is useless once the row is gone).
  await purgeExpiredAuthRequests(db, now);
}
