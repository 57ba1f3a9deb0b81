/**
 * The authorization endpoint's read of the browser, remembered on PGlite while nothing that may
 * change it has been sent (lib/store/remembered-browsers.ts, lib/db/write-watch.ts). What a
 * person or a relying party sees must be what a fresh read gives: after a sign-out, a lock, a
 * profile change or a raw SQL write, the very next authorization knows. On PostgreSQL nothing is
 * remembered, and the same tests hold.
 */
import { sql } from "drizzle-orm";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TtlCache } from "@/lib/cache/ttl-cache";
import { resultRows } from "@/lib/db/client";
import { NoticedWriteWatch, SETTLE_MS } from "@/lib/db/write-notices";
import { WriteWatch } from "@/lib/db/write-watch";
import { BROWSER_TABLES, NOT_BROWSER_TABLES, rememberedBrowsers, type RememberedBrowser } from "@/lib/store/remembered-browsers";
import { endSessions, findUserAgent, type BrowserWithSessions, type SessionWithUser } from "@/lib/store/sessions";
import { FakeClock } from "./fakes/fake-clock";
import { startTestInstance, type TestInstance } from "./harness";
import { Browser, makeClientWithSecret, makeUser, REDIRECT, redirectParams } from "./authorize-support";
import { basic, CHALLENGE, VERIFIER } from "./token-support";

describe("which statements may change a browser", () => {
  const watch = new WriteWatch(NOT_BROWSER_TABLES);
  /** Each text, sent, moves the watch's count (`counts`) or leaves it (`!counts`). */
  const expectVerdicts = (counts: boolean, texts: string[]) => {
    for (const text of texts) {
      const before = watch.version();
      watch.sent(text);
      expect(watch.version() !== before, text).toBe(counts);
    }
  };

  it("counts every write to the browser's tables, as Drizzle and hand-written SQL spell them, and whatever it does not recognise", () => {
    expectVerdicts(true, [
      'update "sessions" set "ended_at" = $1 where "sessions"."id" = $2',
      'insert into "users" ("id", "username") values ($1, $2) returning "id"',
      'delete from "user_factors" where "user_factors"."user_id" = $1',
      'insert into "password_credentials" ("user_id", "hash") values ($1, $2) on conflict ("user_id") do update set "hash" = $3',
      "DELETE FROM sessions WHERE ended_at < $1",
      "DELETE FROM user_agents ua WHERE ua.created_at < $1",
      'WITH c AS (INSERT INTO authorization_codes (code_hash) VALUES ($1) RETURNING 1) UPDATE "sessions" SET last_active_at = $2 WHERE id = $3',
      "UPDATE public.users SET locked = true",
      'delete from only "public"."sessions"',
      'UPDATE "Sessions" SET x = 1',
      // Not recognised as harmless: a table nobody listed, several tables at once, schema changes.
      'insert into "organizations" ("id") values ($1)',
      "TRUNCATE tokens, sessions",
      "ALTER TABLE tokens ADD COLUMN x text",
      "CREATE INDEX ON tokens (x)",
    ]);
  });

  it("ignores reads, and writes only to tables the read does not depend on, even when they read the browser's tables", () => {
    expectVerdicts(false, [
      'select "id" from "sessions" where "sessions"."user_agent_id" = $1',
      'insert into "authorization_codes" ("code_hash", "session_id") values ($1, (select id from sessions where id = $2))',
      'update "tokens" set "rotated_at" = $1 where "token_hash" = $2 and (select locked from users where id = $3) = false',
      'WITH w0 AS (insert into "grants" ("id") values ($1)), w1 AS (insert into "audit_events" ("id") values ($2)) SELECT 1',
      'insert into "rate_limit_counters" ("key", "count") values ($1, 1) on conflict ("key") do update set "count" = "rate_limit_counters"."count" + 1',
      'select * from "tokens" where "id" = $1 for update of "tokens" skip locked',
      'select "updated_at" from "users" for no key update nowait',
      "SELECT 1",
      "VACUUM public.sessions",
    ]);
  });
});

describe("a remembered browser", () => {
  const session = (idleExpiresAt: Date, absoluteExpiresAt: Date) => ({ id: "s1", idleExpiresAt, absoluteExpiresAt }) as SessionWithUser;

  it("is read once while nothing is written, loses sessions that expire meanwhile, and is read again after a write", async () => {
    const clock = new FakeClock();
    const watch = new WriteWatch(NOT_BROWSER_TABLES);
    let reads = 0;
    const start = clock.now();
    const read = (): Promise<BrowserWithSessions> => {
      reads++;
      return Promise.resolve({ id: "b1", sessions: [session(new Date(start + 10_000), new Date(start + 20_000))] });
    };
    const find = rememberedBrowsers(read, new TtlCache<RememberedBrowser>(clock, 60_000), watch);
    expect((await find("cookie", new Date(clock.now())))!.sessions).toHaveLength(1);
    expect((await find("cookie", new Date(clock.now())))!.sessions).toHaveLength(1);
    expect(reads).toBe(1);
    clock.advanceSeconds(11);
    expect((await find("cookie", new Date(clock.now())))!.sessions).toHaveLength(0);
    expect(reads).toBe(1);
    watch.sent('update "sessions" set "last_active_at" = $1');
    await find("cookie", new Date(clock.now()));
    expect(reads).toBe(2);
  });

  it("keeps no unknown cookie, so made-up ones are read each time and push nothing out", async () => {
    const clock = new FakeClock();
    let reads = 0;
    const find = rememberedBrowsers(() => (reads++, Promise.resolve(undefined)), new TtlCache<RememberedBrowser>(clock, 60_000), new WriteWatch(NOT_BROWSER_TABLES));
    expect(await find("made-up", new Date(clock.now()))).toBeUndefined();
    expect(await find("made-up", new Date(clock.now()))).toBeUndefined();
    expect(reads).toBe(2);
  });
});

describe("the write watch on PostgreSQL", () => {
  const browserRead = (reads: { n: number }) => (): Promise<BrowserWithSessions> => {
    reads.n++;
    return Promise.resolve({ id: "b1", sessions: [] });
  };

  it("counts the database's notices of commits to the browser's tables, from any connection, and no others", () => {
    const watch = new NoticedWriteWatch(NOT_BROWSER_TABLES, () => 0);
    watch.setListening(true);
    const before = watch.version();
    watch.noticed("tokens");
    watch.noticed("audit_events");
    expect(watch.version()).toBe(before);
    for (const table of BROWSER_TABLES) {
      const was = watch.version();
      watch.noticed(table);
      expect(watch.version(), table).not.toBe(was);
    }
    // A table nobody listed counts, as a statement writing it does.
    const was = watch.version();
    watch.noticed("a_table_added_later");
    expect(watch.version()).not.toBe(was);
  });

  it("remembers nothing until the database's notices arrive, while they may be lost, and until this process's own write may have committed", async () => {
    let now = 0;
    const watch = new NoticedWriteWatch(NOT_BROWSER_TABLES, () => now);
    const reads = { n: 0 };
    const find = rememberedBrowsers(browserRead(reads), new TtlCache<RememberedBrowser>(new FakeClock(), 60_000), watch);
    /** Looks the cookie up `times` times; returns how many reads the database has had in all. */
    const lookUp = async (times: number) => {
      for (let i = 0; i < times; i++) await find("cookie", new Date(0));
      return reads.n;
    };
    // Not listening yet: every lookup is a read.
    expect(watch.canRemember()).toBe(false);
    expect(await lookUp(2)).toBe(2);
    watch.setListening(true);
    expect(await lookUp(2)).toBe(3);
    // A write of this process: read again, and nothing remembered until it has had time to commit.
    watch.sent('update "users" set "locked" = $1 where "users"."id" = $2');
    expect(watch.canRemember()).toBe(false);
    expect(await lookUp(2)).toBe(5);
    now += SETTLE_MS;
    expect(watch.canRemember()).toBe(true);
    expect(await lookUp(2)).toBe(6);
    // A write elsewhere, told by its notice: read again.
    watch.noticed("sessions");
    expect(await lookUp(1)).toBe(7);
    // The listening connection lost, then back: what was remembered before counts as changed.
    watch.setListening(false);
    expect(await lookUp(1)).toBe(8);
    watch.setListening(true);
    expect(await lookUp(2)).toBe(9);
  });
});

describe("the authorization endpoint after a change", () => {
  let t: TestInstance;
  let clientId: string;
  let secret: string;
  beforeAll(async () => {
    t = await startTestInstance();
    const made = await makeClientWithSecret(t);
    clientId = made.client.id;
    secret = made.secret;
  });
  afterAll(() => t.close());

  const params = (extra: Record<string, string> = {}) => ({
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "openid profile",
    state: "st",
    code_challenge: CHALLENGE,
    code_challenge_method: "S256",
    ...extra,
  });

  async function signedIn(username: string) {
    const user = await makeUser(t, username);
    const b = new Browser(t);
    const done = await b.signIn(await b.authorize(params()), username, "correct horse battery");
    expect(redirectParams(done).get("code")).toBeTruthy();
    // Twice more: from here on a PGlite instance answers from memory.
    for (let i = 0; i < 2; i++) expect(redirectParams(await b.authorize(params({ prompt: "none" }))).get("code")).toBeTruthy();
    return { user, b };
  }

  const silently = async (b: Browser) => redirectParams(await b.authorize(params({ prompt: "none" })));

  it("a session ended by the store is gone at the next authorization", async () => {
    const { user, b } = await signedIn("rb-ended");
    const ua = await findUserAgent(t.inst.db, b.cookies.get("torii_ua")!);
    const [s] = resultRows<{ id: string }>(await t.inst.db.execute(sql`SELECT id FROM sessions WHERE user_id = ${user.id}`));
    await endSessions(t.inst.db, ua!.id, [s!.id], new Date());
    expect((await silently(b)).get("error")).toBe("login_required");
  });

  it("a user locked through the management API is signed in nowhere at the next authorization", async () => {
    const { user, b } = await signedIn("rb-locked");
    expect((await t.api(`/management/v1/users/${user.id}`, { method: "PATCH", json: { locked: true } })).status).toBe(200);
    expect((await silently(b)).get("error")).toBe("login_required");
  });

  it("a raw SQL write to the users table is seen as well", async () => {
    const { user, b } = await signedIn("rb-raw");
    await t.inst.db.execute(sql`UPDATE users SET locked = true WHERE id = ${user.id}`);
    expect((await silently(b)).get("error")).toBe("login_required");
  });

  it("a changed name is in the very next ID token", async () => {
    const { user, b } = await signedIn("rb-renamed");
    expect((await t.api(`/management/v1/users/${user.id}`, { method: "PATCH", json: { givenName: "Renamed" } })).status).toBe(200);
    // Asked for in the ID token itself (the claims parameter), where the code's redemption puts
    // the user as the authorization endpoint read it.
    const code = redirectParams(await b.authorize(params({ prompt: "none", claims: JSON.stringify({ id_token: { given_name: null } }) }))).get("code")!;
    const res = await fetch(`${t.baseUrl}/oauth/v2/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic(clientId, secret) },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: VERIFIER }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id_token: string };
    expect(decodeJwt(body.id_token).given_name).toBe("Renamed");
  });

  it("no table listed as harmless can change the browser's tables by a cascade or a trigger", async () => {
    const q = (text: string) => t.inst.database.query(text, []) as Promise<{ child: string; parent: string }[]>;
    const keys = await q(
      "SELECT c.relname AS child, p.relname AS parent FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid WHERE k.contype = 'f'",
    );
    const watched: readonly string[] = BROWSER_TABLES;
    const harmless: readonly string[] = NOT_BROWSER_TABLES;
    expect(keys.filter((k) => watched.includes(k.child)).length).toBeGreaterThan(0);
    expect(keys.filter((k) => watched.includes(k.child) && harmless.includes(k.parent))).toEqual([]);
    // The only triggers are the write notices (write-notices.ts): they notify and write nothing.
    const triggers = (await t.inst.database.query(
      "SELECT tgrelid::regclass::text AS t, tgfoid::regproc::text AS f FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1",
      [],
    )) as { t: string; f: string }[];
    expect(triggers).toEqual([...BROWSER_TABLES].sort().map((table) => ({ t: table, f: "torii_notify_write" })));
    // Every table named is one of the schema's, so that a rename cannot leave a stale name behind.
    const tables = ((await t.inst.database.query("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'", [])) as { t: string }[]).map((r) => r.t);
    expect(tables).toEqual(expect.arrayContaining([...watched, ...harmless]));
  });

  it("the browser read itself reads only the browser's tables", async () => {
    const sent: string[] = [];
    const spy = t.inst.database.watchWrites!([]);
    spy.sent = (text: string) => (sent.push(text), false);
    await t.inst.store.sessions.findBrowser("a-cookie-nobody-has");
    const read = sent.find((text) => /user_agents/.test(text));
    expect(read).toBeDefined();
    const named = [...read!.matchAll(/\b(?:from|join)\s+"?([a-z_]+)"?/gi)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThanOrEqual(4);
    for (const table of named) expect(BROWSER_TABLES as readonly string[]).toContain(table);
  });
});
