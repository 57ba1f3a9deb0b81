import { sql } from "drizzle-orm";
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "@/lib/db/client";
import { getSettings } from "@/lib/store/settings";
import { startTestInstance, type TestInstance } from "./harness";
import { introspect, issueTokens, keyClient, revoke } from "./introspect-support";
import { basic, expectNoStore, makeClient, makeCode, makeUser, token } from "./token-support";

let t: TestInstance;
let domain: string;
beforeAll(async () => {
  t = await startTestInstance();
  domain = (await getSettings(t.inst)).primaryDomain;
});
afterAll(() => t.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("introspection of active access tokens", () => {
  it("answers a JWT access token with the RFC 7662 fields, username@primarydomain and the claims of the granted scopes", async () => {
    const i = await issueTokens(t, { scopes: ["openid", "profile", "email"] });
    const r = await introspect(t, i.access, i.auth);
    expect(r.status).toBe(200);
    expectNoStore(r.res);
    const jwt = decodeJwt(i.access);
    expect(r.body).toMatchObject({
      active: true,
      aud: i.client.id,
      client_id: i.client.id,
      exp: jwt.exp,
      iat: jwt.iat,
      nbf: jwt.nbf,
      iss: t.issuer,
      jti: jwt.jti,
      scope: "openid profile email",
      token_type: "Bearer",
      username: `${i.user.username}@${domain}`,
      sub: i.user.id,
      email: "jane@example.com",
      email_verified: true,
      given_name: "Jane",
      family_name: "Doe",
      name: "Jane Doe",
      preferred_username: `${i.user.username}@${domain}`,
    });
    // Nothing of scopes that were not granted.
    for (const c of ["phone_number", "phone_number_verified", "address"]) expect(r.body[c]).toBeUndefined();
  });

  it("answers an opaque access token the same way, its jti being the stored token's id", async () => {
    const i = await issueTokens(t, { clientPatch: { accessTokenType: "opaque" }, scopes: ["openid", "phone", "address"] });
    expect(i.access.split(".")).toHaveLength(1);
    const r = await introspect(t, i.access, i.auth);
    expect(r.body).toMatchObject({
      active: true,
      aud: i.client.id,
      client_id: i.client.id,
      iss: t.issuer,
      scope: "openid phone address",
      token_type: "Bearer",
      username: `${i.user.username}@${domain}`,
      phone_number: "+41 44 000 00 00",
      address: { street_address: "Main St 1", locality: "Zurich", postal_code: "8000", country: "CH" },
    });
    expect(r.body.exp - r.body.iat).toBe(900);
    expect(r.body.nbf).toBe(r.body.iat);
    expect(typeof r.body.jti).toBe("string");
    expect(r.body.email).toBeUndefined();
    expect(r.body.given_name).toBeUndefined();
  });

  it("answers a client-credentials token without username or user claims, the client as subject", async () => {
    const { client, secret } = await makeClient(t);
    const auth = basic(client.id, secret!);
    const cc = await token(t, { grant_type: "client_credentials", scope: "openid" }, { auth });
    expect(cc.status).toBe(200);
    const r = await introspect(t, cc.body.access_token, auth);
    expect(r.body).toMatchObject({ active: true, client_id: client.id, sub: client.id, token_type: "Bearer" });
    expect(r.body.username).toBeUndefined();
  });

  it("accepts private_key_jwt with an assertion for the issuer or the introspection endpoint", async () => {
    const k = await keyClient(t);
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client: k.client, user });
    const tr = await token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb", ...(await k.fields()) });
    expect(tr.status).toBe(200);
    for (const aud of [t.issuer, `${t.issuer}/oauth/v2/introspect`]) {
      const r = await introspect(t, tr.body.access_token, undefined, await k.fields(aud));
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ active: true, client_id: k.client.id });
    }
  });
});

describe("introspection client authentication", () => {
  it("refuses client_secret_post, none, a missing or wrong credential and a bad assertion with 401 invalid_client", async () => {
    const i = await issueTokens(t);
    const post = await makeClient(t, { authMethod: "client_secret_post" });
    const pub = await makeClient(t, { authMethod: "none" });
    const k = await keyClient(t);
    const other = await generateKeyPair("RS256");
    const attempts: [string, Promise<{ status: number; body: Record<string, any> }>][] = [
      ["client_secret_post", introspect(t, i.access, undefined, { client_id: post.client.id, client_secret: post.secret! })],
      ["none", introspect(t, i.access, undefined, { client_id: pub.client.id })],
      ["no authentication", introspect(t, i.access)],
      ["wrong secret", introspect(t, i.access, basic(i.client.id, "wrong"))],
      ["unknown client", introspect(t, i.access, basic("nobody", "x"))],
      [
        "assertion signed by another key",
        introspect(t, i.access, undefined, {
          client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
          client_assertion: await k.assertion(t.issuer, other.privateKey),
        }),
      ],
    ];
    for (const [what, p] of attempts) {
      const r = await p;
      expect(r.status, what).toBe(401);
      expect(r.body.error, what).toBe("invalid_client");
      expect(r.body.active, what).toBeUndefined();
    }
  });

  it("answers a missing token with invalid_request and refuses GET", async () => {
    const i = await issueTokens(t);
    const r = await fetch(t.baseUrl + "/oauth/v2/introspect", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: i.auth },
      body: "",
    });
    expect(r.status).toBe(400);
    expect((await r.json()).error).toBe("invalid_request");
    const get = await fetch(t.baseUrl + "/oauth/v2/introspect?token=" + i.access, { headers: { authorization: i.auth } });
    expect(get.status).toBe(405);
    // Not form-encoded, or a repeated parameter: invalid_request, never a 500.
    for (const [type, body] of [["application/json", JSON.stringify({ token: i.access })], ["application/x-www-form-urlencoded", `token=${i.access}&token=x`]]) {
      const bad = await fetch(t.baseUrl + "/oauth/v2/introspect", { method: "POST", headers: { "content-type": type!, authorization: i.auth }, body });
      expect(bad.status).toBe(400);
      expect((await bad.json()).error).toBe("invalid_request");
    }
  });
});

describe("inactive tokens answer { active: false } and nothing else", () => {
  it("for an unknown opaque value and a malformed JWT", async () => {
    const i = await issueTokens(t);
    for (const v of ["unknown-token-value", "a.b.c", i.access.slice(0, -4) + "AAAA"]) {
      const r = await introspect(t, v, i.auth);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ active: false });
    }
  });

  it("for a JWT with alg none or signed by a foreign key", async () => {
    const i = await issueTokens(t);
    const claims = decodeJwt(i.access);
    const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const none = `${enc({ alg: "none", typ: "at+jwt" })}.${enc(claims)}.`;
    const foreign = await generateKeyPair("RS256");
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: "RS256", typ: "at+jwt", kid: decodeProtectedHeader(i.access).kid }).sign(foreign.privateKey);
    for (const v of [none, forged]) expect((await introspect(t, v, i.auth)).body).toEqual({ active: false });
  });

  it("for expired JWT and opaque access tokens", async () => {
    // Lifetimes with margin: on a loaded machine issuing and checking can take a second or more.
    const jwt = await issueTokens(t, { clientPatch: { accessTokenLifetime: 4 } });
    expect((await introspect(t, jwt.access, jwt.auth)).body.active).toBe(true);
    const opaque = await issueTokens(t, { clientPatch: { accessTokenLifetime: 4, accessTokenType: "opaque" } });
    expect((await introspect(t, opaque.access, opaque.auth)).body.active).toBe(true);
    await sleep(4100);
    expect((await introspect(t, jwt.access, jwt.auth)).body).toEqual({ active: false });
    expect((await introspect(t, opaque.access, opaque.auth)).body).toEqual({ active: false });
  });

  it("when the requesting client is not in the token's audience", async () => {
    const other = await makeClient(t);
    const otherAuth = basic(other.client.id, other.secret!);
    for (const patch of [{}, { accessTokenType: "opaque" as const }]) {
      const i = await issueTokens(t, { clientPatch: patch });
      expect((await introspect(t, i.access, i.auth)).body.active).toBe(true);
      expect((await introspect(t, i.access, otherAuth)).body).toEqual({ active: false });
    }
  });

  it("for refresh tokens and ID tokens, whatever the token_type_hint says (access tokens only)", async () => {
    const i = await issueTokens(t);
    expect(i.refresh).toBeDefined();
    expect((await introspect(t, i.refresh!, i.auth)).body).toEqual({ active: false });
    expect((await introspect(t, i.refresh!, i.auth, { token_type_hint: "refresh_token" })).body).toEqual({ active: false });
    expect((await introspect(t, i.idToken, i.auth)).body).toEqual({ active: false });
  });

  // Each of these introspects the token first, so that this instance holds it as active in
  // memory (lib/store/caches.ts): a revocation must end that at once, not a few seconds later.
  it("for JWT and opaque tokens revoked by their client at the revocation endpoint", async () => {
    for (const patch of [{}, { accessTokenType: "opaque" as const }]) {
      const i = await issueTokens(t, { clientPatch: patch });
      expect((await introspect(t, i.access, i.auth)).body.active).toBe(true);
      expect((await revoke(t, i.access, i.auth)).status).toBe(200);
      expect((await introspect(t, i.access, i.auth)).body).toEqual({ active: false });
    }
  });

  it("for a JWT whose grant was revoked (code replay), not only by its signature", async () => {
    const { client, secret } = await makeClient(t);
    const auth = basic(client.id, secret!);
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client, user });
    const first = await token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb" }, { auth });
    expect((await introspect(t, first.body.access_token, auth)).body.active).toBe(true);
    const replay = await token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb" }, { auth });
    expect(replay.body.error).toBe("invalid_grant");
    expect((await introspect(t, first.body.access_token, auth)).body).toEqual({ active: false });
  });

  it("for JWT and opaque tokens of a session whose tokens were revoked (logout)", async () => {
    for (const patch of [{}, { accessTokenType: "opaque" as const }]) {
      const i = await issueTokens(t, { clientPatch: patch });
      expect((await introspect(t, i.access, i.auth)).body.active).toBe(true);
      // What a logout does (lib/oauth/end-session.ts): through the engine's repositories, in a transaction.
      await t.inst.store.transaction((tx) => tx.grants.revokeSessionTokens(i.sessionId, "logout"));
      expect((await introspect(t, i.access, i.auth)).body).toEqual({ active: false });
    }
  });

  it("when the token's user has been locked or changed, at once", async () => {
    const i = await issueTokens(t);
    expect((await introspect(t, i.access, i.auth)).body).toMatchObject({ active: true, family_name: "Doe" });
    expect((await t.api(`/management/v1/users/${i.user.id}`, { method: "PATCH", json: { familyName: "Roe" } })).status).toBe(200);
    expect((await introspect(t, i.access, i.auth)).body).toMatchObject({ active: true, family_name: "Roe" });
    expect((await t.api(`/management/v1/users/${i.user.id}`, { method: "PATCH", json: { locked: true } })).status).toBe(200);
    expect((await introspect(t, i.access, i.auth)).body).toEqual({ active: false });
  });

  it("introspection itself changes nothing and records no audit event", async () => {
    const i = await issueTokens(t);
    const count = async () => resultRows<{ n: number }>(await t.inst.db.execute(sql`SELECT count(*)::int AS n FROM audit_events`))[0]!.n;
    const before = await count();
    await introspect(t, i.access, i.auth);
    expect(await count()).toBe(before);
  });
});
