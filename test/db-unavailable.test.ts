import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, startTestInstance, TEST_DB, type TestInstance } from "./harness";
import { makeClientWithSecret } from "./authorize-support";
import { basic, makeCode, makeUser, token } from "./token-support";
import { TcpProxy } from "./tcp-proxy";
import { LOCALE_COOKIE } from "@/lib/i18n/locales";

/**
 * A database out of reach (a restart, a failover, a network cut) is the server's temporary
 * condition, not an unexpected one: requests that need it are answered 503 with Retry-After
 * (RFC 9110 §15.6.4), in each endpoint's own shape, and are answered again once it is back.
 * The instance reaches PostgreSQL through a TCP proxy that the test cuts and restores.
 */
describe.skipIf(TEST_DB !== "pg")("a database out of reach", () => {
  let t: TestInstance;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let proxy: TcpProxy;
  let cc: { id: string; secret: string };
  let userAccessToken: string;
  let idToken: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    const direct = new URL(database.url);
    proxy = new TcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    await proxy.open();
    const viaProxy = new URL(database.url);
    viaProxy.port = String(proxy.port);
    t = await startTestInstance({ DATABASE_URL: viaProxy.toString() });
    const { client, secret } = await makeClientWithSecret(t);
    cc = { id: client.id, secret };
    const { code } = await makeCode(t, { client, user: await makeUser(t), scopes: ["openid", "profile"] });
    const issued = await token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb" }, { auth: basic(cc.id, cc.secret) });
    expect(issued.status).toBe(200);
    userAccessToken = issued.body.access_token;
    idToken = issued.body.id_token;
  });
  afterAll(async () => {
    await t.close();
    await proxy.cut().catch(() => undefined);
    await database.drop();
  });

  // Answers during the outage come at once; five seconds is a hang.
  const listUsers = () => t.api("/management/v1/users", { signal: AbortSignal.timeout(5_000) });
  const refresh = () =>
    fetch(t.baseUrl + "/oauth/v2/token", {
      method: "POST",
      headers: { authorization: basic(cc.id, cc.secret), "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=refresh_token&refresh_token=not-a-token",
      signal: AbortSignal.timeout(5_000),
    });
  const backChannel = (path: string) =>
    fetch(t.baseUrl + path, {
      method: "POST",
      headers: { authorization: basic(cc.id, cc.secret), "content-type": "application/x-www-form-urlencoded" },
      body: `token=${encodeURIComponent(userAccessToken)}`,
      signal: AbortSignal.timeout(5_000),
    });
  const userinfo = () =>
    fetch(t.baseUrl + "/oidc/v1/userinfo", { headers: { authorization: `Bearer ${userAccessToken}` }, signal: AbortSignal.timeout(5_000) });
  const authorize = () =>
    fetch(t.baseUrl + `/oauth/v2/authorize?client_id=${cc.id}&redirect_uri=https%3A%2F%2Frp.example%2Fcb&response_type=code&scope=openid`, {
      headers: { "accept-language": "de" },
      redirect: "manual",
      signal: AbortSignal.timeout(5_000),
    });

  it("is answered 503 with Retry-After while it lasts, and normally once it is back", async () => {
    expect((await listUsers()).status).toBe(200);
    expect((await refresh()).status).toBe(400);
    expect((await userinfo()).status).toBe(200);

    await proxy.cut();

    // The management API, in its error shape.
    const api = await listUsers();
    expect(api.status).toBe(503);
    expect(api.headers.get("retry-after")).toBe("5");
    expect(await api.json()).toEqual({ error: "service_unavailable", message: "The service is temporarily unavailable; try again shortly." });

    // The token endpoint, as an OAuth error.
    const token = await refresh();
    expect(token.status).toBe(503);
    expect(token.headers.get("retry-after")).toBe("5");
    expect(token.headers.get("cache-control")).toBe("no-store");
    expect(await token.json()).toEqual({ error: "temporarily_unavailable", error_description: "The service is temporarily unavailable; try again shortly." });

    // A valid access token whose revocation records cannot be read is not known to be invalid:
    // userinfo, introspection and revocation answer 503, not 401, `active: false` or a 200 that
    // revoked nothing (the lost listener dropped what the instance remembered of the token).
    for (const res of [await userinfo(), await backChannel("/oauth/v2/introspect"), await backChannel("/oauth/v2/revoke")]) {
      expect(res.status, res.url).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      expect(await res.json()).toEqual({ error: "temporarily_unavailable", error_description: "The service is temporarily unavailable; try again shortly." });
    }

    // A logout with a valid id_token_hint whose keys cannot be read is not a bad request: the
    // browser is told the service is unavailable, in its language.
    const logout = await fetch(t.baseUrl + `/oidc/v1/end_session?id_token_hint=${idToken}`, {
      headers: { accept: "text/html", "accept-language": "fr" },
      redirect: "manual",
      signal: AbortSignal.timeout(5_000),
    });
    expect(logout.status).toBe(503);
    expect(logout.headers.get("retry-after")).toBe("5");
    expect(await logout.text()).toContain('lang="fr"');

    // The authorization endpoint, before it can check the client: its own page, in the
    // browser's language (the lost listener dropped the cached settings and clients).
    const page = await authorize();
    expect(page.status).toBe(503);
    expect(page.headers.get("retry-after")).toBe("5");
    const html = await page.text();
    expect(html).toContain('lang="de"');
    expect(html).not.toMatch(/ECONNREFUSED|CONNECTION_|stack/);

    // A handler that fails on its first read, for a browser: a page in its language (the pinned
    // one of its cookie first); for a program: the OAuth error's JSON.
    const callback = (headers: Record<string, string>) => fetch(t.baseUrl + "/oauth/v2/authorize/callback?id=x", { headers, redirect: "manual", signal: AbortSignal.timeout(5_000) });
    const inBrowser = await callback({ accept: "text/html,application/xhtml+xml", "accept-language": "fr", cookie: `${LOCALE_COOKIE}=it` });
    expect(inBrowser.status).toBe(503);
    expect(inBrowser.headers.get("retry-after")).toBe("5");
    expect(inBrowser.headers.get("content-type")).toContain("text/html");
    const italian = await inBrowser.text();
    expect(italian).toContain('lang="it"');
    expect(italian).toContain("Temporaneamente non disponibile");
    const fromProgram = await callback({ accept: "application/json" });
    expect(fromProgram.status).toBe(503);
    expect((await fromProgram.json()).error).toBe("temporarily_unavailable");

    // A longer outage: every request fails its attempt to connect, and the driver waits longer
    // before each next one, but never more than about a second (reconnectDelaySeconds).
    for (let i = 0; i < 10; i++) expect((await listUsers()).status).toBe(503);

    await proxy.open();
    const back = Date.now();
    await expect.poll(async () => (await listUsers()).status, { timeout: 5_000, interval: 100 }).toBe(200);
    expect(Date.now() - back).toBeLessThan(3_000);
    expect((await refresh()).status).toBe(400);
    expect((await userinfo()).status).toBe(200);
    expect(await (await backChannel("/oauth/v2/introspect")).json()).toMatchObject({ active: true });
    expect((await authorize()).status).toBe(302);
  });
});
