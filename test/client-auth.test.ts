import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomToken } from "@/lib/crypto";
import { setClientSecret } from "@/lib/store/clients";
import { startTestInstance, type TestInstance } from "./harness";
import { basic, makeClient, makeCode, makeUser, token, verify } from "./token-support";

let t: TestInstance;
let keys: Awaited<ReturnType<typeof generateKeyPair>>;
let jwk: Record<string, unknown>;
beforeAll(async () => {
  t = await startTestInstance();
  keys = await generateKeyPair("RS256", { extractable: true });
  jwk = { ...(await exportJWK(keys.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
});
afterAll(() => t.close());

const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

async function assertion(
  clientId: string,
  o: { aud?: string | unknown[]; exp?: number | null; iat?: number | null; jti?: string | null; iss?: string; alg?: string; key?: CryptoKey | Uint8Array } = {},
) {
  const now = Math.floor(Date.now() / 1000);
  // `aud` in the payload, not through setAudience (which refuses a list holding other than strings).
  const jwt = new SignJWT({ aud: (o.aud ?? t.issuer) as string })
    .setProtectedHeader({ alg: o.alg ?? "RS256", kid: "k1" })
    .setIssuer(o.iss ?? clientId)
    .setSubject(clientId);
  if (o.iat !== null) jwt.setIssuedAt(o.iat ?? now);
  if (o.exp !== null) jwt.setExpirationTime(o.exp ?? now + 60);
  if (o.jti !== null) jwt.setJti(o.jti ?? randomToken(12));
  return jwt.sign(o.key ?? keys.privateKey);
}

function unsigned(clientId: string): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const now = Math.floor(Date.now() / 1000);
  return `${enc({ alg: "none" })}.${enc({ iss: clientId, sub: clientId, aud: t.issuer, exp: now + 60, jti: randomToken(8) })}.`;
}

describe("client_secret_basic", () => {
  it("decodes the RFC 6749 2.3.1 encoding (form-urlencoded id and secret, then Base64)", async () => {
    const { client } = await makeClient(t);
    const secret = "s3cr:et+with/special%chars é";
    await setClientSecret(t.inst.db, client.id, secret, new Date());
    const ok = await token(t, { grant_type: "client_credentials" }, { auth: basic(client.id, secret) });
    expect(ok.status).toBe(200);
    // The raw (not form-encoded) pair is a different secret after decoding: '+' would become a space.
    const raw = "Basic " + Buffer.from(`${client.id}:${secret}`).toString("base64");
    expect((await token(t, { grant_type: "client_credentials" }, { auth: raw })).status).toBe(401);
  });

  it("is invalid_request when the body's client_id names another client than the Basic header", async () => {
    const { client, secret } = await makeClient(t);
    const other = await makeClient(t);
    const r = await token(t, { grant_type: "client_credentials", client_id: other.client.id }, { auth: basic(client.id, secret!) });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_request");
    const same = await token(t, { grant_type: "client_credentials", client_id: client.id }, { auth: basic(client.id, secret!) });
    expect(same.status).toBe(200);
  });

  it("answers 401 invalid_client with a Basic challenge for a wrong secret, an unknown client, a malformed header, or another scheme (RFC 6749 5.2)", async () => {
    const { client } = await makeClient(t);
    for (const auth of [basic(client.id, "wrong"), basic("000000000000000000", "x"), "Basic !!!", "Basic " + Buffer.from("nocolon").toString("base64"), "Basic", "Bearer x", "Digest x"]) {
      const r = await token(t, { grant_type: "client_credentials" }, { auth });
      expect(r.status).toBe(401);
      expect(r.body.error).toBe("invalid_client");
      expect(r.res.headers.get("www-authenticate")).toMatch(/^Basic/);
      expect(r.res.headers.get("cache-control")).toBe("no-store");
    }
  });
});

describe("introspection and revocation (spec: a failed client authentication is 401 invalid_client)", () => {
  it.each(["/oauth/v2/introspect", "/oauth/v2/revoke"])("%s answers a bare Basic or another scheme with the Basic challenge (RFC 6749 5.2)", async (path) => {
    for (const auth of ["Basic", "Bearer x"]) {
      const res = await fetch(t.baseUrl + path, { method: "POST", headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" }, body: "token=abc" });
      expect(res.status).toBe(401);
      expect((await res.json()).error).toBe("invalid_client");
      expect(res.headers.get("www-authenticate")).toMatch(/^Basic/);
    }
  });
});

describe("client_secret_post and method binding", () => {
  it("refuses a method other than the registered one", async () => {
    const basicClient = await makeClient(t, { authMethod: "client_secret_basic" });
    const r = await token(t, { grant_type: "client_credentials", client_id: basicClient.client.id, client_secret: basicClient.secret! });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("invalid_client");
    expect(r.res.headers.get("www-authenticate")).toBeNull();
    const postClient = await makeClient(t, { authMethod: "client_secret_post" });
    const r2 = await token(t, { grant_type: "client_credentials" }, { auth: basic(postClient.client.id, postClient.secret!) });
    expect(r2.status).toBe(401);
    expect(r2.res.headers.get("www-authenticate")).toMatch(/^Basic/);
  });

  it("is invalid_request when two mechanisms are used at once", async () => {
    const { client, secret } = await makeClient(t, { authMethod: "client_secret_post" });
    const r = await token(
      t,
      { grant_type: "client_credentials", client_id: client.id, client_secret: secret! },
      { auth: basic(client.id, secret!) },
    );
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_request");
    const r2 = await token(t, { grant_type: "client_credentials", client_id: client.id, client_secret: secret!, client_assertion_type: ASSERTION_TYPE, client_assertion: "a.b.c" });
    expect(r2.body.error).toBe("invalid_request");
  });

  it("is invalid_client when no authentication is sent", async () => {
    const r = await token(t, { grant_type: "client_credentials" });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("invalid_client");
  });

  it("answers a public client that sends a secret with invalid_client", async () => {
    const { client } = await makeClient(t, { authMethod: "none" });
    const r = await token(t, { grant_type: "refresh_token", refresh_token: "x", client_id: client.id, client_secret: "anything" });
    expect(r.status).toBe(401);
  });
});

describe("private_key_jwt", () => {
  async function pkjClient() {
    return (await makeClient(t, { authMethod: "private_key_jwt", jwks: { keys: [jwk] } })).client;
  }
  async function codeParams(clientId: string) {
    const client = { id: clientId } as never;
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client, user });
    return { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb", client_assertion_type: ASSERTION_TYPE };
  }

  it("authenticates with an assertion signed by a registered key, aud = issuer or token endpoint", async () => {
    const client = await pkjClient();
    for (const aud of [t.issuer, t.issuer + "/oauth/v2/token"]) {
      const r = await token(t, { ...(await codeParams(client.id)), client_assertion: await assertion(client.id, { aud }) });
      expect(r.status).toBe(200);
      expect((await verify(t, r.body.id_token)).payload.aud).toBe(client.id);
    }
  });

  it("is not accepted for client credentials, which takes a secret only (spec 5, methods per endpoint)", async () => {
    const client = await pkjClient();
    const r = await token(t, { grant_type: "client_credentials", client_assertion_type: ASSERTION_TYPE, client_assertion: await assertion(client.id) });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("invalid_client");
  });

  it("accepts each jti once", async () => {
    const client = await pkjClient();
    const a = await assertion(client.id);
    expect((await token(t, { ...(await codeParams(client.id)), client_assertion: a })).status).toBe(200);
    const again = await token(t, { ...(await codeParams(client.id)), client_assertion: a });
    expect(again.status).toBe(401);
    expect(again.body.error).toBe("invalid_client");
  });

  it("accepts assertions valid for up to an hour, with or without iat (RFC 7523 3)", async () => {
    const client = await pkjClient();
    const now = Math.floor(Date.now() / 1000);
    for (const a of [await assertion(client.id, { exp: now + 3600 }), await assertion(client.id, { iat: null, exp: now + 3500 })]) {
      const r = await token(t, { ...(await codeParams(client.id)), client_assertion: a });
      expect(r.status).toBe(200);
    }
  });

  it("refuses alg none, HS256 with any secret, foreign keys, bad claims and long lifetimes", async () => {
    const client = await pkjClient();
    const other = await generateKeyPair("RS256");
    const now = Math.floor(Date.now() / 1000);
    const bad = [
      unsigned(client.id),
      await assertion(client.id, { alg: "HS256", key: new TextEncoder().encode("k".repeat(32)) }),
      await assertion(client.id, { key: other.privateKey }),
      await assertion(client.id, { aud: "https://elsewhere.example" }),
      // RFC 7519 4.1.3: a list of strings; jose only checks that it holds the issuer.
      await assertion(client.id, { aud: [t.issuer, 5] }),
      await assertion(client.id, { iss: "someone-else" }),
      await assertion(client.id, { exp: now - 120 }),
      // RFC 7523 3: exp required; valid at most an hour (exp - iat, else exp - now); jti required here.
      await assertion(client.id, { exp: null }),
      await assertion(client.id, { exp: now + 3700 }),
      await assertion(client.id, { iat: now - 1800, exp: now + 1900 }),
      await assertion(client.id, { iat: null, exp: now + 3700 }),
      await assertion(client.id, { iat: now + 300, exp: now + 600 }),
      await assertion(client.id, { jti: null }),
      "not-a-jwt",
    ];
    for (const client_assertion of bad) {
      const r = await token(t, { ...(await codeParams(client.id)), client_assertion });
      expect(r.status, client_assertion.slice(0, 30)).toBe(401);
      expect(r.body.error).toBe("invalid_client");
    }
    const wrongType = await token(t, { ...(await codeParams(client.id)), client_assertion_type: "urn:x", client_assertion: await assertion(client.id) });
    expect(wrongType.status).toBe(401);
  });

  it("is invalid_request when the body's client_id names another client than the assertion", async () => {
    const client = await pkjClient();
    const other = await pkjClient();
    const r = await token(t, { ...(await codeParams(client.id)), client_id: other.id, client_assertion: await assertion(client.id) });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_request");
    const same = await token(t, { ...(await codeParams(client.id)), client_id: client.id, client_assertion: await assertion(client.id) });
    expect(same.status).toBe(200);
  });

  it("is not accepted for the client credentials grant (spec 5 table)", async () => {
    const client = await pkjClient();
    const r = await token(t, { grant_type: "client_credentials", client_assertion_type: ASSERTION_TYPE, client_assertion: await assertion(client.id) });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("invalid_client");
  });
});
