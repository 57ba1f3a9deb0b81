/**
 * The benchmark's database round-trip count (IDP_DEBUG_DB_ROUND_TRIPS=1): counted per request,
 * BEGIN and COMMIT included, in a response header; absent when the variable is not set.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "@/lib/db/client";
import { ROUND_TRIPS_HEADER } from "@/lib/db/round-trips";
import { SETTLE_MS } from "@/lib/db/write-notices";
import { createToriiServer } from "@/lib/server/create-server";
import { startTestInstance, TEST_DB, type TestInstance } from "./harness";
import { createUserAgent, recordAuthentication } from "@/lib/store/sessions";
import { basic, CHALLENGE, makeClient, makeCode, makeUser, VERIFIER } from "./token-support";

let t: TestInstance;
let counting: http.Server;
let countingUrl: string;

beforeAll(async () => {
  process.env.IDP_DEBUG_DB_ROUND_TRIPS = "1";
  t = await startTestInstance();
  delete process.env.IDP_DEBUG_DB_ROUND_TRIPS;
  counting = createToriiServer(t.inst);
  await new Promise<void>((r) => counting.listen(0, "127.0.0.1", r));
  countingUrl = `http://127.0.0.1:${(counting.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => counting.close(() => { r(); }));
  await t.close();
});

describe("database round-trip counter", () => {
  it("counts each statement, and BEGIN and COMMIT of a transaction, inside its run only", async () => {
    const counter = t.inst.database.roundTrips!;
    expect(counter).toBeDefined();
    const one = await counter.run(async (tally) => {
      await t.inst.db.execute(sql`select 1`);
      return tally.n;
    });
    expect(one).toBe(1);
    const tx = await counter.run(async (tally) => {
      await t.inst.db.transaction(async (db) => {
        await db.execute(sql`select 1`);
        await db.execute(sql`select 2`);
      });
      return tally.n;
    });
    expect(tx).toBe(4);
    // Outside a run nothing is counted and nothing fails.
    await t.inst.db.execute(sql`select 1`);
  });

  it("puts the count of each request in a response header, only on a server given the counter", async () => {
    const clients = await t.api("/management/v1/clients?limit=1");
    const counted = await fetch(countingUrl + "/management/v1/clients?limit=1", { headers: { authorization: `Bearer ${t.adminPat}` } });
    expect(counted.status).toBe(200);
    // The PAT lookup and the list are at least two statements.
    expect(Number(counted.headers.get(ROUND_TRIPS_HEADER))).toBeGreaterThanOrEqual(2);
    expect(clients.headers.get(ROUND_TRIPS_HEADER)).toBeNull();
    const unknown = await fetch(countingUrl + "/no-such-path");
    expect(unknown.headers.get(ROUND_TRIPS_HEADER)).toBe("0");
  });

  /**
   * A grant sends its writes (code used or token rotated, grant, tokens, audit event) as one
   * statement with no BEGIN and COMMIT (lib/store/write.ts); only its reads come before it.
   */
  it("sends each grant's writes as one statement, which writes everything", async () => {
    const post = (params: Record<string, string>, auth: string) => tokenCall(countingUrl, params, auth);
    const audited = async (action: string, clientId: string) =>
      resultRows<{ n: number }>(await t.inst.db.execute(sql`select count(*)::int as n from audit_events where action = ${action} and client_id = ${clientId}`))[0]!;

    const { client: cc, secret: ccSecret } = await makeClient(t, { grantTypes: ["client_credentials"], accessTokenType: "opaque" });
    await post({ grant_type: "client_credentials" }, basic(cc.id, ccSecret!)); // fills the client and key caches
    const issued = await post({ grant_type: "client_credentials" }, basic(cc.id, ccSecret!));
    expect(issued.status).toBe(200);
    // An opaque access token is sealed, not stored: nothing to write.
    expect(issued.trips).toBe(0);
    const introspected = await t.api("/oauth/v2/introspect", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic(cc.id, ccSecret!) },
      body: new URLSearchParams({ token: issued.body.access_token! }).toString(),
    });
    expect(((await introspected.json()) as { active: boolean }).active).toBe(true);

    const { client, secret } = await makeClient(t, { accessTokenType: "opaque" });
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client, user, scopes: ["openid", "offline_access"], challenge: CHALLENGE });
    const auth = basic(client.id, secret!);
    expect((await post({ grant_type: "authorization_code", code: "unknown", redirect_uri: "https://rp.example/cb" }, auth)).status).toBe(400); // fills the client cache
    const redeemed = await post({ grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb", code_verifier: VERIFIER }, auth);
    expect(redeemed.status).toBe(200);
    // One read (the code with its grant, user and session), then the one write.
    expect(redeemed.trips).toBe(2);
    // The code grant remembered what the refresh token's own rotation will read; forgotten here,
    // as on an instance that did not issue it: one read (the token with its family, grant and
    // user), then the one write.
    await t.inst.store.issuedRefreshTokens.take(redeemed.body.refresh_token!);
    const refreshed = await post({ grant_type: "refresh_token", refresh_token: redeemed.body.refresh_token! }, auth);
    expect(refreshed.status).toBe(200);
    expect(refreshed.trips).toBe(2);
    // Everything was written: the successor works, the presented token is spent (reuse revokes).
    // The successor's rotation reads nothing: this instance remembered what its read would give,
    // and the write's guard checks in the database whatever of it can have changed.
    const successor = await post({ grant_type: "refresh_token", refresh_token: refreshed.body.refresh_token! }, auth);
    expect(successor.status).toBe(200);
    expect(successor.trips).toBe(1);
    const reused = await post({ grant_type: "refresh_token", refresh_token: redeemed.body.refresh_token! }, auth);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe("invalid_grant");
    // Audited: the family's first refresh (the successor's came from the same address, so only the
    // tokens record it), and in the same statement as the rotation.
    expect((await audited("token.refreshed", client.id)).n).toBe(1);
  });

  /**
   * A refresh token the instance issued, by the code grant or as a successor, rotates in one
   * statement. Its guard compares the user's `updated_at` to the millisecond, since a JavaScript
   * Date keeps no more; PostgreSQL keeps microseconds. With a time late in its millisecond (a
   * driver that rounded instead of truncating would read the next one), the guard must still win
   * at the first try: one statement, no transaction around a second run.
   */
  it("rotates a code's refresh token and its successors in one statement each whatever the microseconds of the user's updated_at", async () => {
    const { client, secret } = await makeClient(t, { accessTokenType: "opaque" });
    const user = await makeUser(t);
    await t.inst.db.execute(sql`UPDATE users SET updated_at = date_trunc('milliseconds', now()) + interval '987 microseconds' WHERE id = ${user.id}`);
    const { code } = await makeCode(t, { client, user, scopes: ["openid", "offline_access"], challenge: CHALLENGE });
    const auth = basic(client.id, secret!);
    let refreshToken = (await tokenCall(countingUrl, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb", code_verifier: VERIFIER }, auth)).body.refresh_token!;
    const trips: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await tokenCall(countingUrl, { grant_type: "refresh_token", refresh_token: refreshToken }, auth);
      expect(r.status).toBe(200);
      trips.push(r.trips);
      refreshToken = r.body.refresh_token!;
    }
    expect(trips).toEqual([1, 1, 1]);
  });

  /**
   * The authorization endpoint with a signed-in browser: one read for the browser of its cookie
   * and the browser's live sessions (lib/store/sessions.ts browserWithSessions), then the one write
   * (the code and the session's activity). The code's redemption on the same instance reads
   * nothing (Store.codeRedemptions): its one statement marks it used behind the checks and writes
   * the rest, even with the user's `updated_at` late in its millisecond.
   */
  it("answers a signed-in browser's authorization request with one read and one write (the write alone once the read is remembered), and redeems its code in one statement", async () => {
    const { client, secret } = await makeClient(t);
    const user = await makeUser(t);
    await t.inst.db.execute(sql`UPDATE users SET updated_at = date_trunc('milliseconds', now()) + interval '987 microseconds' WHERE id = ${user.id}`);
    const ua = await createUserAgent(t.inst.db);
    await recordAuthentication(t.inst.db, { userAgentId: ua.id, userId: user.id, amr: ["pwd"], lifetimes: { sessionIdle: 3600, sessionAbsolute: 7200 }, now: new Date(), from: {} });
    const query = new URLSearchParams({ client_id: client.id, redirect_uri: "https://rp.example/cb", response_type: "code", scope: "openid", code_challenge: CHALLENGE, code_challenge_method: "S256" });
    const authorize = async () => {
      const res = await fetch(`${countingUrl}/oauth/v2/authorize?${query}`, { headers: { cookie: `torii_ua=${ua.cookie}` }, redirect: "manual" });
      return { trips: Number(res.headers.get(ROUND_TRIPS_HEADER)), status: res.status, location: new URL(res.headers.get("location") ?? "", countingUrl) };
    };
    // Fills the client and settings caches, and its code's redemption the signing keys' (read
    // again after 5 s: the redemption below must come within that).
    const first = await authorize();
    await tokenCall(countingUrl, { grant_type: "authorization_code", code: first.location.searchParams.get("code")!, redirect_uri: "https://rp.example/cb", code_verifier: VERIFIER }, basic(client.id, secret!));
    // The browser read is remembered while nothing that may change it is sent
    // (lib/store/remembered-browsers.ts): the code's write is the only statement. On PostgreSQL
    // only once this instance's own writes have had time to commit (write-notices.ts SETTLE_MS).
    if (TEST_DB === "pg") {
      await new Promise((r) => setTimeout(r, SETTLE_MS + 100));
      await authorize();
    }
    const answered = await authorize();
    expect(answered.status).toBe(302);
    expect(answered.location.origin + answered.location.pathname).toBe("https://rp.example/cb");
    expect(answered.location.searchParams.get("code")).toBeTruthy();
    expect(answered.trips).toBe(1);
    // A write to the user (here a raw one) makes it read again.
    await t.inst.db.execute(sql`UPDATE users SET updated_at = date_trunc('milliseconds', now()) + interval '987 microseconds' WHERE id = ${user.id}`);
    const afterWrite = await authorize();
    expect(afterWrite.trips).toBe(2);
    const code = afterWrite.location.searchParams.get("code")!;
    const redeemed = await tokenCall(countingUrl, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb", code_verifier: VERIFIER }, basic(client.id, secret!));
    expect(redeemed.status).toBe(200);
    expect(redeemed.body.id_token).toBeTruthy();
    expect(redeemed.trips).toBe(1);
  });
});

async function tokenCall(base: string, params: Record<string, string>, auth: string): Promise<{ trips: number; status: number; body: Record<string, string> }> {
  const res = await fetch(base + "/oauth/v2/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: auth },
    body: new URLSearchParams(params).toString(),
  });
  return { trips: Number(res.headers.get(ROUND_TRIPS_HEADER)), status: res.status, body: (await res.json()) as Record<string, string> };
}
