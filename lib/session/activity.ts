import type { SessionLifetimes } from "@/lib/store/sessions";

/** At most this long between two recordings of a session's activity (a minute)... */
const MAX_INTERVAL_MS = 60_000;
/** ...and at most this part of the idle lifetime, when that is short. */
const IDLE_FRACTION = 10;

/**
 * Whether an authorization answered from a session should record its activity again (last
 * activity, and the idle expiry moved forward), given when that was last recorded.
 *
 * Why not every time: each recording is an update of the session's row in the authorization's
 * write, and every authorization a browser makes shares that row: silent renewals, sign-ins to
 * several applications at once. On PostgreSQL each such write holds the row until its commit
 * reaches the disk, so they waited for one another. Recorded at most once a minute (a tenth of the
 * idle lifetime, if that is less), a session may reach its idle expiry up to that much sooner
 * than the idle lifetime after its last use, and its last activity shows to within that.
 */
export function activityDue(lastActiveAt: Date, lifetimes: Pick<SessionLifetimes, "sessionIdle">, now: number): boolean {
  const interval = Math.min(MAX_INTERVAL_MS, (lifetimes.sessionIdle * 1000) / IDLE_FRACTION);
  return now - lastActiveAt.getTime() >= interval;
}
