import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestInstance, type TestInstance } from "./harness";
import { basic, expectNoStore, makeClient, token } from "./token-support";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

describe("POST /oauth/v2/token: request shape and the error table (spec 7)", () => {
  it("is invalid_request for a body that is not form-encoded", async () => {
    const { client, secret } = await makeClient(t);
    for (const [type, body] of [
      ["application/json", JSON.stringify({ grant_type: "client_credentials" })],
      ["text/plain", "grant_type=client_credentials"],
    ]) {
      const r = await token(t, {}, { auth: basic(client.id, secret!), headers: { "content-type": type! }, body });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_request");
      expectNoStore(r.res);
    }
    const charset = await token(t, {}, { auth: basic(client.id, secret!), headers: { "content-type": "application/x-www-form-urlencoded; charset=UTF-8" }, body: "grant_type=client_credentials" });
    expect(charset.status).toBe(200);
  });

  it("is invalid_request for a repeated or a missing parameter", async () => {
    const { client, secret } = await makeClient(t);
    const rep = await token(t, {}, { auth: basic(client.id, secret!), body: "grant_type=client_credentials&scope=openid&scope=email" });
    expect(rep.status).toBe(400);
    expect(rep.body.error).toBe("invalid_request");
    expect(rep.body.error_description).toMatch(/scope/);
    const missing = await token(t, {}, { auth: basic(client.id, secret!), body: "scope=openid" });
    expect(missing.body.error).toBe("invalid_request");
    expect(missing.body.error_description).toMatch(/grant_type/);
  });

  it("is unsupported_grant_type for an unknown grant", async () => {
    const { client, secret } = await makeClient(t);
    for (const g of ["password", "implicit", "__proto__", "urn:x:unknown"]) {
      const r = await token(t, { grant_type: g }, { auth: basic(client.id, secret!) });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("unsupported_grant_type");
      expectNoStore(r.res);
    }
  });

  it("an error_description keeps to RFC 6749 §5.2's characters and a bounded length, whatever the request quoted", async () => {
    const { client, secret } = await makeClient(t);
    for (const g of ['a"b\\cé\u0001', "x".repeat(300_000)]) {
      const r = await token(t, { grant_type: g }, { auth: basic(client.id, secret!) });
      expect(r.body.error).toBe("unsupported_grant_type");
      expect(r.body.error_description).toMatch(/^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/);
      expect(r.body.error_description.length).toBeLessThanOrEqual(300);
    }
    const quoted = await token(t, { grant_type: 'a"b\\c' }, { auth: basic(client.id, secret!) });
    expect(quoted.body.error_description).toContain("a'b/c");
  });

  it("is unauthorized_client for a grant the client is not registered for", async () => {
    const { client, secret } = await makeClient(t, { grantTypes: ["authorization_code"] });
    const r = await token(t, { grant_type: "client_credentials" }, { auth: basic(client.id, secret!) });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("unauthorized_client");
    expect(typeof r.body.error_description).toBe("string");
  });

  it("is invalid_client with 401 (and only that error is 401)", async () => {
    const r = await token(t, { grant_type: "client_credentials" }, { auth: basic("x", "y") });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("invalid_client");
    expectNoStore(r.res);
  });

  it("is invalid_scope for an unknown or malformed scope", async () => {
    const { client, secret } = await makeClient(t);
    for (const scope of ["openid unknown", 'openid "quoted"']) {
      const r = await token(t, { grant_type: "client_credentials", scope }, { auth: basic(client.id, secret!) });
      expect(r.body.error).toBe("invalid_scope");
    }
  });

  it("answers other methods with 405 and no caching", async () => {
    const res = await fetch(t.baseUrl + "/oauth/v2/token");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it("never answers garbage with a 5xx", async () => {
    const { client, secret } = await makeClient(t);
    const bodies = [
      "",
      "%%%",
      "grant_type=authorization_code&code=%FF%FE&redirect_uri=%00",
      "grant_type=refresh_token&refresh_token=" + "a".repeat(5000),
      "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=e30.e30.e30",
      "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=" + Buffer.from('{"alg":"RS256","kid":"1"}').toString("base64url") + ".x.y",
      "grant_type=client_credentials&client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer&client_assertion=a.b.c",
      "grant_type=client_credentials&client_id=%E0%A4%A",
      "grant_type=authorization_code&code=x&redirect_uri=y&code_verifier=" + "~".repeat(500),
    ];
    for (const body of bodies) {
      for (const auth of [basic(client.id, secret!), "Basic " + Buffer.from("%:%").toString("base64"), undefined]) {
        const r = await token(t, {}, { auth, body });
        expect(r.status, body.slice(0, 60)).toBeLessThan(500);
        expect(r.status).toBeGreaterThanOrEqual(400);
        expect(typeof r.body.error).toBe("string");
      }
    }
  });

  it("discovery advertises the token endpoint, grants, methods and algorithms", async () => {
    const doc = await (await fetch(t.baseUrl + "/.well-known/openid-configuration")).json();
    expect(doc.token_endpoint).toBe(`${t.issuer}/oauth/v2/token`);
    expect(doc.grant_types_supported).toEqual(
      expect.arrayContaining(["authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"]),
    );
    expect(doc.token_endpoint_auth_methods_supported).toEqual(["client_secret_basic", "client_secret_post", "none", "private_key_jwt"]);
    expect(doc.token_endpoint_auth_signing_alg_values_supported).not.toContain("none");
    expect(doc.token_endpoint_auth_signing_alg_values_supported.some((a: string) => a.startsWith("HS"))).toBe(false);
    expect(doc.scopes_supported).toEqual(expect.arrayContaining(["openid", "profile", "email", "phone", "address", "offline_access"]));
    expect(doc.claims_supported).toEqual(expect.arrayContaining(["sub", "email", "address", "azp", "sid"]));
  });
});
