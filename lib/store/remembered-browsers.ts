import { sha256 } from "@/lib/crypto";
import type { TtlCache } from "@/lib/cache/ttl-cache";
import type { WriteWatch } from "@/lib/db/write-watch";
import { sessionStillOpen, type BrowserWithSessions } from "./sessions";

/** A browser's read, with the write watch's version from before the read was sent. */
export type RememberedBrowser = { version: number; browser: BrowserWithSessions | undefined };

/**
 * Every table the browser read depends on: its sessions, their users, the users' confirmed second
 * factors and password dates, and the browser row. A user's deletion or lock, a sign-in or
 * sign-out, a session's activity, a new factor: each writes one of these.
 */
export const BROWSER_TABLES = ["user_agents", "sessions", "users", "user_factors", "password_credentials"] as const;

/**
 * The tables whose writes cannot change the browser read: it does not read them, and no foreign
 * key of the tables it reads cascades from them (test/remembered-browsers.test.ts checks both
 * against the schema). A write to any other table, one added later included, makes the read
 * happen again (lib/db/write-watch.ts): leaving a table out of this list costs reads, never
 * correctness. The grant path's writes are all here, so that codes and tokens leave it alone.
 */
export const NOT_BROWSER_TABLES = [
  "account_lockouts",
  "apis",
  "audit_events",
  "auth_requests",
  "authorization_codes",
  "client_roles",
  "clients",
  "consents",
  "email_verifications",
  "grants",
  "instance_settings",
  "login_failures",
  "machine_keys",
  "mail_outbox",
  "password_resets",
  "personal_access_tokens",
  "rate_limit_counters",
  "recovery_codes",
  "refresh_token_families",
  "signing_keys",
  "text_overrides",
  "token_revocations",
  "tokens",
  "used_jtis",
  "user_roles",
] as const;

/**
 * The authorization endpoint reads the browser of its cookie, with its live sessions and their
 * users, on every request: the costliest statement of a code flow (a join whose every column is
 * decoded). The read is remembered for as long as the write watch (`Database.watchWrites`) has
 * seen no write that may change one of its tables (any but `NOT_BROWSER_TABLES`) since it was
 * sent: then the database would answer the same, but for time. On PGlite the watch sees every
 * statement, this process being the only writer; on PostgreSQL it also hears of every other
 * connection's commits, and says when it cannot be trusted (`canRemember`), as while one of this
 * process's writes may not have committed yet. Sessions that have expired since are left out
 * here, as the read leaves them out. Unknown cookies are not kept, so that made-up ones cannot
 * push real browsers out.
 */
export function rememberedBrowsers(
  read: (cookie: string, now: Date) => Promise<BrowserWithSessions | undefined>,
  cache: TtlCache<RememberedBrowser>,
  watch: WriteWatch,
): (cookie: string, now: Date) => Promise<BrowserWithSessions | undefined> {
  const readNoting = async (cookie: string, now: Date): Promise<RememberedBrowser> => {
    const version = watch.version();
    return { version, browser: await read(cookie, now) };
  };
  return async (cookie, now) => {
    // A write may be on its way (write-notices.ts): ask the database, and keep nothing.
    if (!watch.canRemember()) return read(cookie, now);
    const key = sha256(cookie);
    let entry = await cache.get(key, () => readNoting(cookie, now));
    if (entry.version !== watch.version()) {
      // Something may have changed since that read was sent: read again.
      cache.invalidate(key);
      entry = await cache.get(key, () => readNoting(cookie, now));
    }
    if (!entry.browser) {
      cache.invalidate(key);
      return undefined;
    }
    return liveAt(entry.browser, now);
  };
}

/** The browser with only the sessions still open at `now` (ended ones are never read). */
function liveAt(browser: BrowserWithSessions, now: Date): BrowserWithSessions {
  const sessions = browser.sessions.filter((s) => sessionStillOpen(s, now));
  return sessions.length === browser.sessions.length ? browser : { id: browser.id, sessions };
}
