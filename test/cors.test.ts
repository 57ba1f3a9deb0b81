import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestInstance, type TestInstance } from "./harness";
import type { Client } from "@/lib/store/clients";
import { basic, CHALLENGE, makeClient, makeCode, makeUser, token, VERIFIER } from "./token-support";

// CORS for browser applications (README, "Browser applications"): what a page on some origin may
// read from the token, revocation, introspection and userinfo endpoints.

let t: TestInstance;
const SPA = "https://spa.example.com";
const OTHER = "https://other.example.com";
let spa: { id: string; secret: string; client: Client };

beforeAll(async () => {
  t = await startTestInstance();
  // Its redirect URI's origin is its web origin unless allowedOrigins says otherwise.
  const { client, secret } = await makeClient(t, { redirectUris: [`${SPA}/callback`] });
  spa = { id: client.id, secret: secret!, client };
});
afterAll(() => t.close());

const cc = (origin?: string) => token(t, { grant_type: "client_credentials" }, { auth: basic(spa.id, spa.secret), headers: origin ? { origin } : {} });

function expectAllowed(res: Response, origin: string) {
  expect(res.headers.get("access-control-allow-origin")).toBe(origin);
  expect(res.headers.get("access-control-allow-credentials")).toBeNull();
  expect(res.headers.get("vary")).toMatch(/\bOrigin\b/);
}

function expectNotAllowed(res: Response) {
  expect(res.headers.get("access-control-allow-origin")).toBeNull();
  expect(res.headers.get("vary")).toMatch(/\bOrigin\b/);
}

describe("CORS on the back-channel endpoints", () => {
  it("token: the client's redirect URI origin may read the answer; another origin may not; no Origin, no CORS header", async () => {
    const ok = await cc(SPA);
    expect(ok.status).toBe(200);
    expectAllowed(ok.res, SPA);

    const other = await cc(OTHER);
    expect(other.status).toBe(200); // the server answers; the browser keeps it from the page
    expectNotAllowed(other.res);

    const server = await cc();
    expect(server.res.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("token: an error about the grant of an authenticated client is readable from its origin; a failed authentication from any client's origin, not from others", async () => {
    const bad = await token(t, { grant_type: "refresh_token", refresh_token: "nope" }, { auth: basic(spa.id, spa.secret), headers: { origin: SPA } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("invalid_grant");
    expectAllowed(bad.res, SPA);

    // It names no client, and tells nothing about any: the page may read it and act on it.
    const unauthenticated = await token(t, { grant_type: "client_credentials" }, { auth: basic(spa.id, "wrong"), headers: { origin: SPA } });
    expect(unauthenticated.status).toBe(401);
    expectAllowed(unauthenticated.res, SPA);
    const elsewhere = await token(t, { grant_type: "client_credentials" }, { auth: basic(spa.id, "wrong"), headers: { origin: OTHER } });
    expect(elsewhere.status).toBe(401);
    expectNotAllowed(elsewhere.res);
  });

  it("preflight on token, revocation, introspection and userinfo: 204 with the methods and headers a page may send, never credentials", async () => {
    for (const [path, methods] of [
      ["/oauth/v2/token", "POST"],
      ["/oauth/v2/revoke", "POST"],
      ["/oauth/v2/introspect", "POST"],
      ["/oidc/v1/userinfo", "GET, POST"],
    ] as const) {
      const res = await fetch(t.baseUrl + path, {
        method: "OPTIONS",
        headers: { origin: SPA, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
      });
      expect(res.status, path).toBe(204);
      expect(res.headers.get("access-control-allow-origin"), path).toBe(SPA);
      expect(res.headers.get("access-control-allow-methods"), path).toBe(methods);
      expect(res.headers.get("access-control-allow-headers"), path).toMatch(/authorization/);
      expect(res.headers.get("access-control-allow-headers"), path).toMatch(/content-type/);
      expect(res.headers.get("access-control-allow-credentials"), path).toBeNull();
      expect(Number(res.headers.get("access-control-max-age")), path).toBeGreaterThan(0);
    }
  });

  it("revocation and introspection follow the authenticated client; userinfo follows the token's client", async () => {
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client: spa.client, user, redirectUri: `${SPA}/callback`, scopes: ["openid", "profile"], challenge: CHALLENGE });
    const issued = await token(t, { grant_type: "authorization_code", code, redirect_uri: `${SPA}/callback`, code_verifier: VERIFIER }, { auth: basic(spa.id, spa.secret), headers: { origin: SPA } });
    expect(issued.status).toBe(200);
    expectAllowed(issued.res, SPA);
    const at = issued.body.access_token as string;

    const userinfo = (origin: string) => fetch(t.baseUrl + "/oidc/v1/userinfo", { headers: { authorization: `Bearer ${at}`, origin } });
    const mine = await userinfo(SPA);
    expect(mine.status).toBe(200);
    expectAllowed(mine, SPA);
    const theirs = await userinfo(OTHER);
    expect(theirs.status).toBe(200);
    expectNotAllowed(theirs);

    const form = (body: Record<string, string>) => ({
      method: "POST",
      headers: { authorization: basic(spa.id, spa.secret), "content-type": "application/x-www-form-urlencoded", origin: SPA },
      body: new URLSearchParams(body).toString(),
    });
    const introspected = await fetch(t.baseUrl + "/oauth/v2/introspect", form({ token: at }));
    expect(introspected.status).toBe(200);
    expect((await introspected.json()).active).toBe(true);
    expectAllowed(introspected, SPA);

    const revoked = await fetch(t.baseUrl + "/oauth/v2/revoke", form({ token: at }));
    expect(revoked.status).toBe(200);
    expectAllowed(revoked, SPA);
    // A token that no longer resolves names no client: the refusal is readable from any client's
    // origin (a single-page app learns it needs a new token instead of seeing a network error),
    // and from no other.
    const after = await userinfo(SPA);
    expect(after.status).toBe(401);
    expectAllowed(after, SPA);
    expect(after.headers.get("access-control-expose-headers")).toContain("WWW-Authenticate");
    expectNotAllowed(await userinfo(OTHER));
  });

  it("allowedOrigins replaces the redirect URI origins; [] allows no page; null goes back to the redirect URIs", async () => {
    const patch = (allowedOrigins: string[] | null) => t.api(`/management/v1/clients/${spa.id}`, { method: "PATCH", json: { allowedOrigins } });
    const set = await patch([OTHER]);
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ allowedOrigins: [OTHER], webOrigins: [OTHER] });
    expectAllowed((await cc(OTHER)).res, OTHER);
    expectNotAllowed((await cc(SPA)).res);

    expect((await patch([])).status).toBe(200);
    expectNotAllowed((await cc(SPA)).res);
    expectNotAllowed((await cc(OTHER)).res);

    const reset = await patch(null);
    expect(await reset.json()).toMatchObject({ allowedOrigins: null, webOrigins: [SPA] });
    expectAllowed((await cc(SPA)).res, SPA);
  });

  it("the management API refuses origins that could never match, with a code per origin", async () => {
    const res = await t.api(`/management/v1/clients/${spa.id}`, {
      method: "PATCH",
      json: { allowedOrigins: ["https://a.example.com/", "https://*.example.com", "http://plain.example.com", "ftp://files.example.com", "nonsense", "https://ok.example.com"] },
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    const codes = Object.fromEntries(body.fields.map((f: { path: string; code: string }) => [f.path, f.code]));
    expect(codes).toEqual({
      "allowedOrigins.0": "origin_not_exact",
      "allowedOrigins.1": "origin_wildcard",
      "allowedOrigins.2": "origin_http",
      "allowedOrigins.3": "origin_scheme",
      "allowedOrigins.4": "origin_invalid",
    });
    // Nothing changed.
    expect((await (await t.api(`/management/v1/clients/${spa.id}`)).json()).allowedOrigins).toBeNull();
  });

  it("discovery and the key set allow any origin; the management API sends no CORS header", async () => {
    for (const path of ["/.well-known/openid-configuration", "/oauth/v2/keys"]) {
      const res = await fetch(t.baseUrl + path, { headers: { origin: OTHER } });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("access-control-allow-origin"), path).toBe("*");
    }
    const mgmt = await t.api("/management/v1/clients", { headers: { origin: SPA } });
    expect(mgmt.status).toBe(200);
    expect(mgmt.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await fetch(t.baseUrl + "/management/v1/clients", { method: "OPTIONS", headers: { origin: SPA, "access-control-request-method": "GET" } });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
  });
});
