import { decodeProtectedHeader } from "jose";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, startTestInstance, TEST_DB, type TestInstance } from "./harness";
import { resultRows } from "@/lib/db/client";
import { SETTLE_MS } from "@/lib/db/write-notices";
import { createUserAgent, endSessions, findUserAgent, recordAuthentication } from "@/lib/store/sessions";
import { basic, CHALLENGE, makeClient, token } from "./token-support";
import { Browser, makeClient as makeBrowserClient, makeUser, REDIRECT, redirectParams } from "./authorize-support";

/**
 * Two engines on one PostgreSQL, as two instances behind a load balancer: a change made through
 * one is seen by the other at once (LISTEN/NOTIFY after the commit), not only after the caches'
 * few seconds. PGlite has one process per data folder, so this is PostgreSQL only.
 */
describe.skipIf(TEST_DB !== "pg")("two engines on one PostgreSQL", () => {
  let a: TestInstance;
  let b: TestInstance;
  // What beforeAll started, to undo in reverse order; it may have stopped part-way.
  const cleanup: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    const database = await createTestDatabase();
    cleanup.push(() => database.drop());
    // One issuer, as instances behind one load balancer have.
    const env = { DATABASE_URL: database.url, IDP_MASTER_KEY: "cd".repeat(32), IDP_ISSUER: "http://torii.test" };
    a = await startTestInstance(env);
    cleanup.push(() => a.close());
    b = await startTestInstance(env);
    cleanup.push(() => b.close());
  });
  afterAll(async () => {
    for (const undo of cleanup.reverse()) await undo();
  });

  /** Polls until `check` holds, for at most one second; returns how long it took. */
  async function within1s(check: () => Promise<boolean>): Promise<number> {
    const start = Date.now();
    while (!(await check())) {
      if (Date.now() - start > 1000) throw new Error("not seen within one second");
      await new Promise((r) => setTimeout(r, 25));
    }
    return Date.now() - start;
  }

  const clientCredentials = (t: TestInstance, id: string, secret: string) =>
    token(t, { grant_type: "client_credentials" }, { auth: basic(id, secret) });

  it("are two engines", () => {
    expect(a.inst.id).not.toBe(b.inst.id);
  });

  it("a secret rotated on A stops working on B within one second", async () => {
    const created = await a.api("/management/v1/clients", {
      method: "POST",
      json: { name: "m2m", grantTypes: ["client_credentials"], responseTypes: [], redirectUris: [], authMethod: "client_secret_basic" },
    });
    expect(created.status).toBe(201);
    const { clientId, clientSecret } = await created.json();
    expect((await clientCredentials(b, clientId, clientSecret)).status).toBe(200); // B caches the client now
    const rotated = await a.api(`/management/v1/clients/${clientId}/secret`, { method: "POST" });
    expect(rotated.status).toBe(200);
    const { clientSecret: next } = await rotated.json();
    await within1s(async () => (await clientCredentials(b, clientId, clientSecret)).status === 401);
    expect((await clientCredentials(b, clientId, next)).status).toBe(200);
  });

  it("a client deleted on A gets no more tokens from B within one second", async () => {
    const { client, secret } = await makeClient(a);
    expect((await clientCredentials(b, client.id, secret!)).status).toBe(200);
    expect((await a.api(`/management/v1/clients/${client.id}`, { method: "DELETE" })).status).toBe(204);
    await within1s(async () => (await clientCredentials(b, client.id, secret!)).status === 401);
  });

  it("a key rotated on A is published by B at once, and tokens A signs with it verify on B", async () => {
    const { client, secret } = await makeClient(a);
    const before = decodeProtectedHeader((await clientCredentials(b, client.id, secret!)).body.access_token).kid;
    const res = await a.api("/management/v1/keys/rotate", { method: "POST" });
    expect(res.status).toBe(200);
    const { kid } = await res.json();
    expect(kid).not.toBe(before);
    // Relying parties that fetch B's key set find the new key within a second...
    await within1s(async () => ((await (await fetch(b.baseUrl + "/oauth/v2/keys")).json()).keys as { kid: string }[]).some((k) => k.kid === kid));
    // ...while both instances still sign with the key the relying parties already have.
    expect(decodeProtectedHeader((await clientCredentials(b, client.id, secret!)).body.access_token).kid).toBe(before);
    // Once the max-age has passed (simulated: the handover time moved into the past), A signs
    // with the new key, and B verifies A's tokens at once.
    await a.inst.db.execute(sql`UPDATE signing_keys SET retired_at = now() - interval '1 second' WHERE status = 'retired' AND retired_at > now()`);
    a.inst.caches.invalidate("keys");
    const fresh = (await clientCredentials(a, client.id, secret!)).body.access_token as string;
    expect(decodeProtectedHeader(fresh).kid).toBe(kid);
    const introspected = await fetch(b.baseUrl + "/oauth/v2/introspect", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic(client.id, secret!) },
      body: new URLSearchParams({ token: fresh }),
    });
    expect(await introspected.json()).toMatchObject({ active: true });
  });

  it("a token B holds as active in memory is inactive on B within one second once A revokes it", async () => {
    for (const accessTokenType of ["jwt", "opaque"] as const) {
      const { client, secret } = await makeClient(a, { accessTokenType });
      const auth = basic(client.id, secret!);
      const access = (await clientCredentials(a, client.id, secret!)).body.access_token as string;
      const introspectOnB = async () =>
        (await (
          await fetch(b.baseUrl + "/oauth/v2/introspect", {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded", authorization: auth },
            body: new URLSearchParams({ token: access }),
          })
        ).json()) as { active: boolean };
      expect((await introspectOnB()).active).toBe(true);
      const revoked = await fetch(a.baseUrl + "/oauth/v2/revoke", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: auth },
        body: new URLSearchParams({ token: access }),
      });
      expect(revoked.status).toBe(200);
      await within1s(async () => !(await introspectOnB()).active);
    }
  });

  it("a login text overridden on A shows on B's pages within one second, and its reset too", async () => {
    // The authorization error page of an unknown client, rendered by B's engine (a Next route in
    // production, so called as Next would) with B's cached overrides.
    const errorPageOnB = async () => (await new Browser(b).authorize({ client_id: "nobody", redirect_uri: "https://rp.test/cb", ui_locales: "it" })).text();
    const standard = await errorPageOnB(); // B caches the Italian overrides (none) now
    const put = (text: string | null) => a.api("/management/v1/texts/it", { method: "PUT", json: { texts: { "errors.unknownClient": text } } });
    expect((await put("Applicazione sconosciuta presso ACME.")).status).toBe(200);
    await within1s(async () => (await errorPageOnB()).includes("Applicazione sconosciuta presso ACME."));
    expect((await put(null)).status).toBe(200);
    await within1s(async () => (await errorPageOnB()) === standard);
  });

  it("an API created and changed on A is offered by B within one second (discovery scopes, resource indicators)", async () => {
    const scopesOnB = async () => (await (await fetch(b.baseUrl + "/.well-known/openid-configuration")).json()).scopes_supported as string[];
    expect(await scopesOnB()).not.toContain("orders:read"); // B caches discovery and the APIs now
    const created = await a.api("/management/v1/apis", {
      method: "POST",
      json: { identifier: "https://orders.test", name: "Orders", scopes: [{ name: "orders:read", description: "Read orders" }] },
    });
    expect(created.status).toBe(201);
    const api = await created.json();
    await within1s(async () => (await scopesOnB()).includes("orders:read"));

    // B issues tokens for the new API (RFC 8707 resource) to a client allowed it.
    const { client, secret } = await makeClient(a, { apiScopes: { "https://orders.test": ["orders:read"] } });
    const forOrders = (scope: string) => token(b, { grant_type: "client_credentials", resource: "https://orders.test", scope }, { auth: basic(client.id, secret!) });
    expect((await forOrders("orders:read")).status).toBe(200);
    const changed = await a.api(`/management/v1/apis/${api.apiId}`, {
      method: "PATCH",
      json: { scopes: [{ name: "orders:read", description: "Read orders" }, { name: "orders:write", description: "Change orders" }] },
    });
    expect(changed.status).toBe(200);
    await within1s(async () => (await scopesOnB()).includes("orders:write"));
  });

  it("settings changed on A apply on B within one second", async () => {
    const res = await a.api("/management/v1/features", { method: "PUT", json: { tokenExchange: true, impersonation: false } });
    expect(res.status).toBe(200);
    await within1s(async () => {
      const doc = await (await fetch(b.baseUrl + "/.well-known/openid-configuration")).json();
      return (doc.grant_types_supported as string[]).includes("urn:ietf:params:oauth:grant-type:token-exchange");
    });
  });
  it("a browser A answers from memory is signed out at A's next authorizations once B locks its user or ends its session", async () => {
    const client = await makeBrowserClient(a);
    const params = (extra: Record<string, string> = {}) => ({
      client_id: client.id,
      redirect_uri: REDIRECT,
      response_type: "code",
      scope: "openid",
      state: "st",
      code_challenge: CHALLENGE,
      code_challenge_method: "S256",
      ...extra,
    });
    const silently = async (onA: Browser) => redirectParams(await onA.authorize(params({ prompt: "none" })));
    const changes = {
      lock: async (userId: string) => {
        await b.inst.db.execute(sql`UPDATE users SET locked = true WHERE id = ${userId}`);
      },
      end: async (userId: string, onA: Browser) => {
        const ua = await findUserAgent(b.inst.db, onA.cookies.get("torii_ua")!);
        const ids = resultRows<{ id: string }>(await b.inst.db.execute(sql`SELECT id FROM sessions WHERE user_id = ${userId}`)).map((r) => r.id);
        await endSessions(b.inst.db, ua!.id, ids, new Date());
      },
    };
    for (const [name, change] of Object.entries(changes)) {
      const username = `two-engines-${name}`;
      const user = await makeUser(a, username);
      const ua = await createUserAgent(a.inst.db);
      await recordAuthentication(a.inst.db, { userAgentId: ua.id, userId: user.id, amr: ["pwd"], lifetimes: { sessionIdle: 3600, sessionAbsolute: 7200 }, now: new Date(), from: {} });
      const onA = new Browser(a);
      onA.cookies.set("torii_ua", ua.cookie);
      expect((await silently(onA)).get("code")).toBeTruthy();
      // Once A's own writes have settled (lib/db/write-notices.ts), A answers this browser from memory.
      await new Promise((r) => setTimeout(r, SETTLE_MS + 100));
      for (let i = 0; i < 2; i++) expect((await silently(onA)).get("code")).toBeTruthy();
      await change(user.id, onA);
      await within1s(async () => (await silently(onA)).get("error") === "login_required");
    }
  });
});
