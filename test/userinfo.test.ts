import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getSettings } from "@/lib/store/settings";
import { startTestInstance, type TestInstance } from "./harness";
import { issueTokens, revoke } from "./introspect-support";
import { basic, makeClient, makeUser, token } from "./token-support";

let t: TestInstance;
let domain: string;
beforeAll(async () => {
  t = await startTestInstance();
  domain = (await getSettings(t.inst)).primaryDomain;
});
afterAll(() => t.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function userinfo(init: { bearer?: string; method?: string; form?: Record<string, string>; headers?: Record<string, string>; query?: string } = {}) {
  const headers: Record<string, string> = { ...init.headers };
  if (init.bearer !== undefined) headers.authorization = `Bearer ${init.bearer}`;
  if (init.form) headers["content-type"] = "application/x-www-form-urlencoded";
  const res = await fetch(t.baseUrl + "/oidc/v1/userinfo" + (init.query ?? ""), {
    method: init.method ?? (init.form ? "POST" : "GET"),
    headers,
    body: init.form ? new URLSearchParams(init.form).toString() : undefined,
  });
  const text = await res.text();
  return { res, status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : {}, challenge: res.headers.get("www-authenticate") };
}

function expectInvalidToken(r: Awaited<ReturnType<typeof userinfo>>) {
  expect(r.status).toBe(401);
  expect(r.challenge).toMatch(/^Bearer /);
  expect(r.challenge).toContain('error="invalid_token"');
  expect(r.res.headers.get("cache-control")).toBe("no-store");
}

describe("userinfo returns sub and the standard claims of the granted scopes", () => {
  it("GET with a Bearer JWT: profile and email claims, nothing of phone or address, no-store", async () => {
    const i = await issueTokens(t, { scopes: ["openid", "profile", "email"] });
    const r = await userinfo({ bearer: i.access });
    expect(r.status).toBe(200);
    expect(r.res.headers.get("cache-control")).toBe("no-store");
    expect(r.res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(r.body).toEqual({
      sub: i.user.id,
      name: "Jane Doe",
      given_name: "Jane",
      family_name: "Doe",
      preferred_username: `${i.user.username}@${domain}`,
      updated_at: Math.floor(i.user.updatedAt.getTime() / 1000),
      email: "jane@example.com",
      email_verified: true,
    });
  });

  it("only sub for a token with openid alone; phone and structured address when granted", async () => {
    const bare = await issueTokens(t, { scopes: ["openid"] });
    expect((await userinfo({ bearer: bare.access })).body).toEqual({ sub: bare.user.id });

    const i = await issueTokens(t, { scopes: ["openid", "phone", "address"] });
    expect((await userinfo({ bearer: i.access })).body).toEqual({
      sub: i.user.id,
      phone_number: "+41 44 000 00 00",
      phone_number_verified: false,
      address: { street_address: "Main St 1", locality: "Zurich", postal_code: "8000", country: "CH", formatted: "Main St 1\n8000 Zurich\nCH" },
    });
  });

  it("opaque tokens; POST with the token in the Authorization header or in the form body", async () => {
    const i = await issueTokens(t, { clientPatch: { accessTokenType: "opaque" }, scopes: ["openid", "email"] });
    const expected = { sub: i.user.id, email: "jane@example.com", email_verified: true };
    expect((await userinfo({ bearer: i.access })).body).toEqual(expected);
    expect((await userinfo({ bearer: i.access, method: "POST" })).body).toEqual(expected);
    const viaForm = await userinfo({ form: { access_token: i.access } });
    expect(viaForm.status).toBe(200);
    expect(viaForm.body).toEqual(expected);
  });

  it("the Bearer scheme is case-insensitive (RFC 7235)", async () => {
    const i = await issueTokens(t, { scopes: ["openid"] });
    expect((await userinfo({ headers: { authorization: `bearer ${i.access}` } })).status).toBe(200);
  });
});

describe("userinfo refusals", () => {
  it("no token: 401 with a bare Bearer challenge (RFC 6750 3.1); a query token does not count", async () => {
    const i = await issueTokens(t, { scopes: ["openid"] });
    for (const r of [await userinfo(), await userinfo({ query: `?access_token=${i.access}` })]) {
      expect(r.status).toBe(401);
      expect(r.challenge).toMatch(/^Bearer /);
      expect(r.challenge).not.toContain("error=");
    }
  });

  it("an unknown, malformed or tampered token: 401 invalid_token", async () => {
    const i = await issueTokens(t, { scopes: ["openid", "offline_access"] });
    expect(i.refresh).toBeDefined();
    expectInvalidToken(await userinfo({ bearer: "unknown" }));
    expectInvalidToken(await userinfo({ bearer: i.access.slice(0, -4) + "AAAA" }));
    // The ID token is a JWT we signed, but not an access token.
    expectInvalidToken(await userinfo({ bearer: i.idToken }));
    expectInvalidToken(await userinfo({ bearer: i.refresh! }));
  });

  it("an expired token: 401 invalid_token", async () => {
    // A lifetime with margin: on a loaded machine issuing and the first call can take a second.
    const i = await issueTokens(t, { clientPatch: { accessTokenLifetime: 4 }, scopes: ["openid"] });
    expect((await userinfo({ bearer: i.access })).status).toBe(200);
    await sleep(4100);
    expectInvalidToken(await userinfo({ bearer: i.access }));
  });

  // Each token is used once first, so that this instance holds it as active in memory: the
  // revocation must end that at once.
  it("a token revoked by its client or by logout: 401 invalid_token at once", async () => {
    for (const patch of [{}, { accessTokenType: "opaque" as const }]) {
      const a = await issueTokens(t, { clientPatch: patch, scopes: ["openid"] });
      expect((await userinfo({ bearer: a.access })).status).toBe(200);
      await revoke(t, a.access, a.auth);
      expectInvalidToken(await userinfo({ bearer: a.access }));
      const b = await issueTokens(t, { clientPatch: patch, scopes: ["openid"] });
      expect((await userinfo({ bearer: b.access })).status).toBe(200);
      await t.inst.store.transaction((tx) => tx.grants.revokeSessionTokens(b.sessionId, "logout"));
      expectInvalidToken(await userinfo({ bearer: b.access }));
    }
  });

  it("a token with no user (client credentials): 401 invalid_token", async () => {
    const { client, secret } = await makeClient(t);
    const cc = await token(t, { grant_type: "client_credentials", scope: "openid" }, { auth: basic(client.id, secret!) });
    expect(cc.status).toBe(200);
    expectInvalidToken(await userinfo({ bearer: cc.body.access_token }));
  });

  it("a token whose user was deleted: 401 invalid_token", async () => {
    const user = await makeUser(t);
    const i = await issueTokens(t, { user, scopes: ["openid"] });
    expect((await userinfo({ bearer: i.access })).status).toBe(200);
    expect((await t.api(`/management/v1/users/${user.id}`, { method: "DELETE" })).status).toBe(204);
    expectInvalidToken(await userinfo({ bearer: i.access }));
  });

  it("a token without openid: 403 insufficient_scope", async () => {
    const i = await issueTokens(t, { scopes: ["profile"] });
    const r = await userinfo({ bearer: i.access });
    expect(r.status).toBe(403);
    expect(r.challenge).toContain('error="insufficient_scope"');
    expect(r.challenge).toContain('scope="openid"');
    expect(r.body.error).toBe("insufficient_scope");
  });

  it("a token in the header and in the body at once: 400 invalid_request", async () => {
    const i = await issueTokens(t, { scopes: ["openid"] });
    const r = await userinfo({ bearer: i.access, form: { access_token: i.access } });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_request");
    expect(r.challenge).toContain('error="invalid_request"');
  });

  it("a malformed Authorization header and a repeated body parameter: 400 invalid_request", async () => {
    expect((await userinfo({ headers: { authorization: "Bearer " } })).status).toBe(400);
    expect((await userinfo({ headers: { authorization: "Bearer a b" } })).status).toBe(400);
    const repeated = await fetch(t.baseUrl + "/oidc/v1/userinfo", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "access_token=a&access_token=b",
    });
    expect(repeated.status).toBe(400);
  });

  it("a repeated parameter whose name is a line break or not ASCII: 400 invalid_request, the challenge within RFC 6750's characters", async () => {
    for (const name of ["%0D%0A", "%FF%FE", "caf%C3%A9", "%22q%5C"]) {
      const res = await fetch(t.baseUrl + "/oidc/v1/userinfo", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `${name}=1&${name}=2&access_token=abc`,
      });
      expect(res.status, name).toBe(400);
      const body = (await res.json()) as { error: string; error_description: string };
      expect(body.error).toBe("invalid_request");
      expect(body.error_description).toContain("repeated");
      const challenge = res.headers.get("www-authenticate")!;
      expect(challenge).toMatch(/^Bearer realm="torii", error="invalid_request", error_description="[\x20\x21\x23-\x5b\x5d-\x7e]*repeated[\x20\x21\x23-\x5b\x5d-\x7e]*"$/);
    }
  });

  it("other methods: 405", async () => {
    const put = await userinfo({ method: "PUT" });
    expect(put.status).toBe(405);
    expect(put.res.headers.get("allow")).toBe("GET, HEAD, POST");
  });

  it("HEAD is answered as GET, without the body", async () => {
    const i = await issueTokens(t, { scopes: ["openid"] });
    const head = await fetch(t.baseUrl + "/oidc/v1/userinfo", { method: "HEAD", headers: { authorization: `Bearer ${i.access}` } });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await head.text()).toBe("");
    const bad = await fetch(t.baseUrl + "/oidc/v1/userinfo", { method: "HEAD", headers: { authorization: "Bearer nope" } });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });
});

describe("userinfo for browser-based clients", () => {
  it("answers a CORS preflight; only the token's client's web origins may read the answer (test/cors.test.ts has the rest)", async () => {
    const pre = await fetch(t.baseUrl + "/oidc/v1/userinfo", {
      method: "OPTIONS",
      headers: { origin: "https://spa.example", "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://spa.example");
    expect(pre.headers.get("access-control-allow-headers")).toMatch(/authorization/i);
    const i = await issueTokens(t, { scopes: ["openid"] });
    // The test client's redirect URI is https://rp.example/cb: its origin is the client's web origin.
    const own = await userinfo({ bearer: i.access, headers: { origin: "https://rp.example" } });
    expect(own.res.headers.get("access-control-allow-origin")).toBe("https://rp.example");
    expect(own.res.headers.get("access-control-allow-credentials")).toBeNull();
    const other = await userinfo({ bearer: i.access, headers: { origin: "https://spa.example" } });
    expect(other.status).toBe(200);
    expect(other.res.headers.get("access-control-allow-origin")).toBeNull();
  });
});
