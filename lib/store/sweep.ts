import { sql } from "drizzle-orm";
import type { LockoutPolicy, Retention } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { purgeExpiredAuthRequests } from "./auth-requests";
import { purgeLockouts } from "./lockouts";
import { purgeOutbox } from "./mail-outbox";
import { purgeExpiredPasswordResets } from "./password-resets";
import { purgeExpiredEmailVerifications } from "./email-verifications";
import { DEFAULT_LOCKOUT, DEFAULT_RETENTION, readSettings } from "./settings";

/** What the sweep keeps beyond expiry; read from the settings when not given. */
export type SweepPolicy = { retention: Retention; lockoutPolicy: LockoutPolicy };

/**
 * How long rows are kept past their expiry, so that a late replay is still recognised as one
 * (a reused code or rotated refresh token revokes what it issued) rather than as merely unknown.
 */
const GRACE_MS = 86_400_000;

/**
 * Keeps every table bounded: deletes rows that can no longer affect any decision. Ended
 * rate-limit windows, replay-guard `jti`s past their assertion's expiry, revocations of tokens
 * that have expired anyway; a day after their expiry: codes, tokens, refresh families and grants
 * with nothing left that refers to them, and sessions that ended or expired; pending sign-ins
 * past their lifetime, browsers with neither a session nor a pending sign-in, login failures
 * older than the lockout window and ended locks, expired password reset links, and audit events
 * and sent mails older than the retention.
 */
export async function purgeExpiredRows(db: Executor, now: Date, policy?: SweepPolicy): Promise<void> {
  const p = policy ?? (await sweepPolicy(db));
  const t = now.toISOString();
  const graceAgo = new Date(now.getTime() - GRACE_MS).toISOString();
  await db.execute(sql`DELETE FROM rate_limit_counters WHERE expires_at < ${t}`);
  await db.execute(sql`DELETE FROM used_jtis WHERE expires_at < ${t}`);
  await db.execute(sql`DELETE FROM token_revocations WHERE expires_at < ${t}`);
  await db.execute(sql`DELETE FROM authorization_codes WHERE expires_at < ${graceAgo}`);
  await db.execute(sql`DELETE FROM tokens WHERE expires_at < ${graceAgo}`);
  await db.execute(sql`
    DELETE FROM refresh_token_families f WHERE f.expires_at < ${graceAgo}
      AND NOT EXISTS (SELECT 1 FROM tokens WHERE tokens.family_id = f.id)`);
  // Every stored refresh token is in a family of its grant, kept while it has tokens (above), so a
  // grant without families has no tokens either (tokens are not indexed by grant).
  await db.execute(sql`
    DELETE FROM grants g WHERE g.expires_at < ${graceAgo}
      AND NOT EXISTS (SELECT 1 FROM refresh_token_families f WHERE f.grant_id = g.id)
      AND NOT EXISTS (SELECT 1 FROM authorization_codes c WHERE c.grant_id = g.id)`);
  // A session gone is as good as ended for every check (sessionEnded), so ended and expired
  // ones go once the grace has passed.
  await db.execute(sql`
    DELETE FROM sessions WHERE ended_at < ${graceAgo} OR absolute_expires_at < ${graceAgo} OR idle_expires_at < ${graceAgo}`);
  // Pending sign-ins nobody finished (their id in a login URL is useless once the row is gone).
  await purgeExpiredAuthRequests(db, now);
  // Browsers with nothing stored for them; the hour spares one whose first request is in flight.
  const hourAgo = new Date(now.getTime() - 3_600_000).toISOString();
  await db.execute(sql`
    DELETE FROM user_agents ua WHERE ua.created_at < ${hourAgo}
      AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.user_agent_id = ua.id)
      AND NOT EXISTS (SELECT 1 FROM auth_requests a WHERE a.user_agent_id = ua.id)`);
  // Failures older than the lockout window and ended locks decide nothing any more.
  await purgeLockouts(db, new Date(now.getTime() - p.lockoutPolicy.windowSeconds * 1000), now);
  const auditBefore = new Date(now.getTime() - p.retention.auditDays * 86_400_000).toISOString();
  await db.execute(sql`DELETE FROM audit_events WHERE occurred_at < ${auditBefore}`);
  // Reset links past their expiry open nothing; the outbox is kept as long as the audit log.
  await purgeExpiredPasswordResets(db, now);
  await purgeExpiredEmailVerifications(db, now);
  await purgeOutbox(db, new Date(auditBefore));
}

async function sweepPolicy(db: Executor): Promise<SweepPolicy> {
  const s = await readSettings(db);
  return {
    retention: { ...DEFAULT_RETENTION, ...s?.retention },
    lockoutPolicy: s?.lockoutPolicy ?? DEFAULT_LOCKOUT,
  };
}
