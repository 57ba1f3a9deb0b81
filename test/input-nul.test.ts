import { sql } from "drizzle-orm";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isInputDataError } from "@/lib/http/text-input";
import { startTestInstance, type TestInstance } from "./harness";
import { makeClient } from "./token-support";

/**
 * Issue 16, defect 5: PostgreSQL refuses U+0000 in text. A NUL anywhere a client can put one is
 * refused at the edge with the endpoint's own 4xx, never a 500 (with an empty body).
 */
let t: TestInstance;
let clientId: string;
beforeAll(async () => {
  t = await startTestInstance({}, { nextRoutes: true });
  clientId = (await makeClient(t, { authMethod: "client_secret_basic" })).client.id;
});
afterAll(() => t.close());

const form = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(t.baseUrl + path, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body, redirect: "manual" });
const basicRaw = (idAndSecret: string) => "Basic " + Buffer.from(idAndSecret).toString("base64");

async function expectOAuthError(res: Response, status: number, error: string) {
  expect(res.status).toBe(status);
  expect((await res.json()).error).toBe(error);
}

describe("back-channel endpoints", () => {
  it.each(["/oauth/v2/token", "/oauth/v2/introspect", "/oauth/v2/revoke"])("%s: NUL in Basic credentials (raw or form-encoded) is invalid_request", async (path) => {
    await expectOAuthError(await form(path, "grant_type=client_credentials&token=x", { authorization: basicRaw("a\u0000b:secret") }), 400, "invalid_request");
    await expectOAuthError(await form(path, "grant_type=client_credentials&token=x", { authorization: basicRaw("a%00b:secret") }), 400, "invalid_request");
    await expectOAuthError(await form(path, "grant_type=client_credentials&token=x", { authorization: basicRaw(`${clientId}:s%00`) }), 400, "invalid_request");
  });

  it.each(["/oauth/v2/token", "/oauth/v2/introspect", "/oauth/v2/revoke"])("%s: NUL in client_id or any parameter is invalid_request", async (path) => {
    await expectOAuthError(await form(path, "grant_type=client_credentials&token=x&client_id=a%00b"), 400, "invalid_request");
    await expectOAuthError(await form(path, "grant_type=client_credentials&token=x%00&client_id=c"), 400, "invalid_request");
  });

  it("a client assertion whose sub holds a NUL is invalid_request", async () => {
    const assertion = await new SignJWT({ sub: "x\u0000y", iss: "x\u0000y", aud: t.issuer }).setProtectedHeader({ alg: "HS256" }).sign(new Uint8Array(32));
    const body = new URLSearchParams({
      grant_type: "client_credentials",
      client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      client_assertion: assertion,
    });
    await expectOAuthError(await form("/oauth/v2/token", body.toString()), 400, "invalid_request");
  });

  it("a jwt-bearer assertion whose kid holds a NUL is a 4xx", async () => {
    const assertion = await new SignJWT({ sub: "u", iss: "u", aud: t.issuer }).setProtectedHeader({ alg: "RS256", kid: "k\u0000" }).sign(new Uint8Array(32)).catch(() => null);
    const header = Buffer.from(JSON.stringify({ alg: "RS256", kid: "k\u0000" })).toString("base64url");
    const jwt = assertion ?? `${header}.${Buffer.from('{"sub":"u"}').toString("base64url")}.${"A".repeat(20)}`;
    const res = await form("/oauth/v2/token", new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: jwt }).toString());
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });
});

describe("authorization and logout", () => {
  it("authorize with a NUL in client_id (GET or POST) shows the error page, status 400", async () => {
    const get = await fetch(`${t.baseUrl}/oauth/v2/authorize?client_id=a%00b&redirect_uri=https://rp.example/cb&response_type=code`, { redirect: "manual" });
    expect(get.status).toBe(400);
    expect(get.headers.get("content-type")).toMatch(/text\/html/);
    expect(await get.text()).toMatch(/<html/i);
    const post = await form("/oauth/v2/authorize", "client_id=a%00b&redirect_uri=https%3A%2F%2Frp.example%2Fcb&response_type=code");
    expect(post.status).toBe(400);
  });

  it("end_session with a NUL goes to the error page, not a 500", async () => {
    const res = await fetch(`${t.baseUrl}/oidc/v1/end_session?client_id=a%00b&state=s`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toMatch(/error|badRequest/);
  });
});

describe("management API", () => {
  it("a NUL in a path id is 404, in a query parameter a field error", async () => {
    for (const p of ["/users/a%00b", "/clients/a%00b", "/users/a%00b/keys", "/texts/a%00"]) {
      const res = await t.api("/management/v1" + p);
      expect(res.status).toBe(404);
      expect((await res.json()).error).toBe("not_found");
    }
    const q = await t.api("/management/v1/audit?action=a%00b");
    expect(q.status).toBe(400);
    expect((await q.json()).fields).toEqual([expect.objectContaining({ path: "action", code: "nul_character" })]);
  });

  it("a NUL in a JSON field names that field", async () => {
    const user = await t.api("/management/v1/users", { method: "POST", json: { username: "nul\u0000user", email: "n@mail.example", givenName: "N", familyName: "U" } });
    expect(user.status).toBe(400);
    expect((await user.json()).fields).toEqual([expect.objectContaining({ path: "username", code: "nul_character" })]);
    const client = await t.api("/management/v1/clients", { method: "POST", json: { name: "c", redirectUris: ["https://rp.example/\u0000"] } });
    expect(client.status).toBe(400);
    expect((await client.json()).fields).toEqual([expect.objectContaining({ path: "redirectUris.0", code: "nul_character" })]);
    const settings = await t.api("/management/v1/settings", { method: "PUT", json: { primaryDomain: "a\u0000.example" } });
    expect(settings.status).toBe(400);
  });
});

describe("the safety net", () => {
  it("recognises the database's refusal of a client's value, on this database", async () => {
    const err = await t.inst.db.execute(sql`SELECT ${"a\u0000b"}::text AS v`).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).not.toBeNull();
    expect(isInputDataError(err)).toBe(true);
    expect(isInputDataError(new Error("connection refused"))).toBe(false);
  });
});
