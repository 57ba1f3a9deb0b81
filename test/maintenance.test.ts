import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "@/lib/db/client";
import { purgeExpiredRows } from "@/lib/store/sweep";
import { AUTH_REQUEST_LIFETIME_SECONDS, createAuthRequest } from "@/lib/store/auth-requests";
import { hitRateLimit } from "@/lib/store/rate-limit";
import { createUserAgent } from "@/lib/store/sessions";
import { DEFAULT_LOCKOUT } from "@/lib/store/settings";
import { startTestInstance, type TestInstance } from "./harness";
import { Browser, makeClient, makeUser, REDIRECT, redirectParams } from "./authorize-support";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const count = async (table: string) =>
  resultRows<{ n: number }>(await t.inst.db.execute(sql.raw(`SELECT count(*)::int AS n FROM ${table}`)))[0]!.n;

describe("maintenance", () => {
  it("sweeps ended rate-limit windows and expired replay guards, keeping live ones", async () => {
    const now = new Date();
    await hitRateLimit(t.inst.db, "old", 10, 60, new Date(now.getTime() - 120_000));
    await hitRateLimit(t.inst.db, "live", 10, 60, now);
    await t.inst.db.execute(
      sql`INSERT INTO used_jtis (issuer, jti, expires_at) VALUES ('c', 'old', ${new Date(now.getTime() - 1000).toISOString()}), ('c', 'live', ${new Date(now.getTime() + 60_000).toISOString()})`,
    );
    await purgeExpiredRows(t.inst.db, now);
    const keys = resultRows<{ key: string }>(await t.inst.db.execute(sql`SELECT key FROM rate_limit_counters`)).map((r) => r.key);
    expect(keys).toEqual(["live"]);
    expect(await count("used_jtis")).toBe(1);
  });

  it("purges authorization requests past their lifetime, keeping pending ones", async () => {
    const now = new Date();
    const ua = await createUserAgent(t.inst.db);
    const request = {
      userAgentId: ua.id,
      clientId: "c",
      redirectUri: "https://rp.example/cb",
      responseType: "code",
      responseMode: "query",
      scopes: ["openid"],
      locale: "en",
    };
    const expired = await createAuthRequest(t.inst.db, request, new Date(now.getTime() - AUTH_REQUEST_LIFETIME_SECONDS * 1000 - 1000));
    const live = await createAuthRequest(t.inst.db, request, now);
    await purgeExpiredRows(t.inst.db, now);
    const hashes = resultRows<{ id_hash: string }>(await t.inst.db.execute(sql`SELECT id_hash FROM auth_requests`)).map((r) => r.id_hash);
    expect(hashes).not.toContain(expired.row.idHash);
    expect(hashes).toContain(live.row.idHash);
  });

  it("counts within one window and starts over in the next", async () => {
    const w = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const r1 = await hitRateLimit(t.inst.db, "k", 2, 60, new Date(w.getTime() + 1000));
    const r2 = await hitRateLimit(t.inst.db, "k", 2, 60, new Date(w.getTime() + 2000));
    const r3 = await hitRateLimit(t.inst.db, "k", 2, 60, new Date(w.getTime() + 3000));
    expect([r1.allowed, r2.allowed, r3.allowed]).toEqual([true, true, false]);
    expect(r3.retryAfterSeconds).toBe(57);
    const next = await hitRateLimit(t.inst.db, "k", 2, 60, new Date(w.getTime() + 61_000));
    expect(next).toMatchObject({ allowed: true, count: 1 });
  });
});

describe("retention sweep (injected time)", () => {
  const DAY = 86_400_000;
  const ids = async (table: string, col = "id") =>
    resultRows<{ v: string }>(await t.inst.db.execute(sql.raw(`SELECT ${col}::text AS v FROM ${table}`))).map((r) => r.v).sort();

  it("keeps every table bounded: ended sessions, expired grants, tokens, families, idle browsers, old audit events and login failures go", async () => {
    const now = new Date(Date.now() + 400 * DAY); // far enough ahead that rows of other tests count as old
    const at = (ms: number) => new Date(now.getTime() + ms).toISOString();
    const db = t.inst.db;
    const user = await makeUser(t, "sweep-user");
    await db.execute(sql`INSERT INTO user_agents (id, cookie_hash, created_at) VALUES
      ('ua-orphan', 'h1', ${at(-2 * DAY)}), ('ua-new', 'h2', ${at(-60_000)}), ('ua-live', 'h3', ${at(-2 * DAY)}), ('ua-ended', 'h4', ${at(-3 * DAY)})`);
    await db.execute(sql`INSERT INTO sessions (id, user_agent_id, user_id, auth_time, idle_expires_at, absolute_expires_at, ended_at) VALUES
      ('s-live', 'ua-live', ${user.id}, ${at(-DAY)}, ${at(DAY)}, ${at(10 * DAY)}, NULL),
      ('s-ended-old', 'ua-ended', ${user.id}, ${at(-3 * DAY)}, ${at(DAY)}, ${at(10 * DAY)}, ${at(-2 * DAY)}),
      ('s-ended-recent', 'ua-live', ${user.id}, ${at(-3 * DAY)}, ${at(DAY)}, ${at(10 * DAY)}, ${at(-3_600_000)}),
      ('s-expired-old', 'ua-live', ${user.id}, ${at(-40 * DAY)}, ${at(-39 * DAY)}, ${at(-2 * DAY)}, NULL)`);
    await db.execute(sql`INSERT INTO grants (id, client_id, grant_type, scopes, expires_at) VALUES
      ('g-old', 'c', 'authorization_code', '{openid}', ${at(-2 * DAY)}),
      ('g-old-referenced', 'c', 'authorization_code', '{openid}', ${at(-2 * DAY)}),
      ('g-old-sliding', 'c', 'authorization_code', '{openid}', ${at(-2 * DAY)}),
      ('g-live', 'c', 'authorization_code', '{openid}', ${at(DAY)})`);
    await db.execute(sql`INSERT INTO refresh_token_families (id, grant_id, client_id, scopes, expires_at) VALUES
      ('f-old', 'g-old', 'c', '{openid}', ${at(-2 * DAY)}), ('f-live', 'g-old-referenced', 'c', '{openid}', ${at(DAY)}),
      ('f-old-sliding', 'g-old-sliding', 'c', '{openid}', ${at(-2 * DAY)})`);
    await db.execute(sql`INSERT INTO tokens (id, kind, token_hash, client_id, grant_id, family_id, scopes, audience, expires_at) VALUES
      ('t-old', 'refresh', 'th1', 'c', 'g-old', 'f-old', '{openid}', '{}', ${at(-2 * DAY)}),
      ('t-recent', 'access', 'th2', 'c', 'g-live', NULL, '{openid}', '{}', ${at(-3_600_000)}),
      ('t-live', 'refresh', 'th3', 'c', 'g-old-referenced', 'f-live', '{openid}', '{}', ${at(DAY)}),
      -- A rotation's successor outlives its family's first expiry: family and grant stay with it.
      ('t-sliding', 'refresh', 'th4', 'c', 'g-old-sliding', 'f-old-sliding', '{openid}', '{}', ${at(DAY)})`);
    await db.execute(sql`INSERT INTO audit_events (actor_type, action, occurred_at) VALUES
      ('system', 'sweep.old', ${at(-91 * DAY)}), ('system', 'sweep.recent', ${at(-89 * DAY)})`);
    await db.execute(sql`INSERT INTO login_failures (account_key, address, at) VALUES
      ('sweep', 'a', ${at(-2 * 3_600_000)}), ('sweep', 'b', ${at(-60_000)})`);
    await db.execute(sql`INSERT INTO account_lockouts (account_key, locked_at, locked_until) VALUES
      ('sweep-ended', ${at(-2 * 3_600_000)}, ${at(-3_600_000)}), ('sweep-live', ${at(-60_000)}, ${at(3_600_000)})`);

    await purgeExpiredRows(db, now);

    expect(await ids("sessions")).toEqual(["s-ended-recent", "s-live"]);
    expect(await ids("user_agents")).toEqual(["ua-live", "ua-new"]);
    expect(await ids("tokens")).toEqual(["t-live", "t-recent", "t-sliding"]);
    expect(await ids("refresh_token_families")).toEqual(["f-live", "f-old-sliding"]);
    expect(await ids("grants")).toEqual(["g-live", "g-old-referenced", "g-old-sliding"]);
    expect((await ids("audit_events", "action")).filter((a) => a.startsWith("sweep."))).toEqual(["sweep.recent"]);
    expect(await ids("login_failures", "address")).toEqual(["b"]);
    expect(await ids("account_lockouts", "account_key")).toEqual(["sweep-live"]);
  });

  it("keeps audit events as long as the retention setting says", async () => {
    const now = new Date(Date.now() + 800 * DAY);
    const at = (days: number) => new Date(now.getTime() - days * DAY).toISOString();
    await t.inst.db.execute(sql`INSERT INTO audit_events (actor_type, action, occurred_at) VALUES
      ('system', 'keep.5', ${at(5)}), ('system', 'keep.15', ${at(15)})`);
    await purgeExpiredRows(t.inst.db, now, { retention: { auditDays: 10 }, lockoutPolicy: DEFAULT_LOCKOUT });
    expect((await ids("audit_events", "action")).filter((a) => a.startsWith("keep."))).toEqual(["keep.5"]);
  });
});

describe("user agents are created only when something is stored for them", () => {
  it("a cookieless authorize request that ends in an error leaves no row and sets no cookie; one that starts a sign-in does", async () => {
    const before = await count("user_agents");
    const clientId = (await makeClient(t)).id;
    const b = new Browser(t);
    const failed = await b.authorize({ client_id: clientId, redirect_uri: REDIRECT, response_type: "code", scope: "openid", prompt: "none", state: "s" });
    expect(redirectParams(failed).get("error")).toBe("login_required");
    const badScope = await b.authorize({ client_id: clientId, redirect_uri: REDIRECT, response_type: "token", scope: "openid", state: "s" });
    expect(redirectParams(badScope).get("error")).toBeTruthy();
    expect(b.cookies.has("torii_ua")).toBe(false);
    expect(await count("user_agents")).toBe(before);
    const started = await b.authorize({ client_id: clientId, redirect_uri: REDIRECT, response_type: "code", scope: "openid", state: "s" });
    expect(started.headers.get("location")).toMatch(/^\/ui\/login\?authRequest=/);
    expect(b.cookies.has("torii_ua")).toBe(true);
    expect(await count("user_agents")).toBe(before + 1);
    // The same browser again: no second row.
    await b.authorize({ client_id: clientId, redirect_uri: REDIRECT, response_type: "code", scope: "openid", state: "s" });
    expect(await count("user_agents")).toBe(before + 1);
  });
});
