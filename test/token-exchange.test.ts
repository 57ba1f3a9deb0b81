import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomToken } from "@/lib/crypto";
import type { Client } from "@/lib/store/clients";
import { getSettings, updateSettings } from "@/lib/store/settings";
import type { User } from "@/lib/store/users";
import { startTestInstance, type TestInstance } from "./harness";
import { basic, CHALLENGE, expectNoStore, makeClient, makeCode, makeUser, token, verify, VERIFIER } from "./token-support";

const GT = "urn:ietf:params:oauth:grant-type:token-exchange";
const TT = {
  access: "urn:ietf:params:oauth:token-type:access_token",
  refresh: "urn:ietf:params:oauth:token-type:refresh_token",
  id: "urn:ietf:params:oauth:token-type:id_token",
  jwt: "urn:ietf:params:oauth:token-type:jwt",
  userId: "urn:torii:params:oauth:token-type:user_id",
};

let t: TestInstance;
let client: Client;
let secret: string;
let user: User;
let admin: User;
let keys: Awaited<ReturnType<typeof generateKeyPair>>;

beforeAll(async () => {
  t = await startTestInstance();
  keys = await generateKeyPair("RS256", { extractable: true });
  ({ client, secret } = (await makeClient(t)) as { client: Client; secret: string });
  user = await makeUser(t);
  admin = await makeUser(t, { roles: ["impersonation"] });
});
afterAll(() => t.close());

async function features(f: { tokenExchange: boolean; impersonation: boolean }) {
  await getSettings(t.inst);
  await updateSettings(t.inst, { features: f });
}

/** A user's tokens through the code grant (the browser part is another module's). */
async function userTokens(u: User, c = client, s = secret, scopes = ["openid", "profile", "email", "offline_access"]) {
  const { code } = await makeCode(t, { client: c, user: u, scopes });
  const r = await token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb" }, { auth: basic(c.id, s) });
  expect(r.status).toBe(200);
  return r.body;
}

const exchange = (p: Record<string, string>, c = client, s = secret) => token(t, { grant_type: GT, ...p }, { auth: basic(c.id, s) });

/**
 * Exchanges a jwt subject token signed by a private_key_jwt client (its key `kid` is `keys`), for a
 * JWT access token, with the admin's access token as the actor.
 */
async function jwtSubjectExchange(clientId: string, kid: string) {
  const actor = (await userTokens(admin)).access_token;
  const clientAssertion = () =>
    new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid })
      .setIssuer(clientId)
      .setSubject(clientId)
      .setAudience(t.issuer)
      .setExpirationTime(Math.floor(Date.now() / 1000) + 60)
      .setJti(randomToken(8))
      .sign(keys.privateKey);
  return async (subject_token: string) =>
    token(t, {
      grant_type: GT,
      subject_token,
      subject_token_type: TT.jwt,
      actor_token: actor,
      actor_token_type: TT.access,
      requested_token_type: TT.jwt,
      client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      client_assertion: await clientAssertion(),
    });
}

describe("token exchange (RFC 8693)", () => {
  it("is unsupported_grant_type, saying so, while the feature is off", async () => {
    await features({ tokenExchange: false, impersonation: false });
    const { access_token } = await userTokens(user);
    const r = await exchange({ subject_token: access_token, subject_token_type: TT.access });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("unsupported_grant_type");
    expect(r.body.error_description).toMatch(/tokenExchange/);
  });

  it("exchanges a JWT access token for an opaque one (requested access_token = opaque only)", async () => {
    await features({ tokenExchange: true, impersonation: false });
    const { access_token } = await userTokens(user);
    const r = await exchange({ subject_token: access_token, subject_token_type: TT.access, requested_token_type: TT.access, scope: "openid email" });
    expect(r.status).toBe(200);
    expectNoStore(r.res);
    expect(r.body).toMatchObject({ token_type: "Bearer", issued_token_type: TT.access, scope: "openid email" });
    expect(r.body.access_token.split(".")).toHaveLength(1);
    expect((await verify(t, r.body.id_token)).payload.sub).toBe(user.id);
    expect(r.body.refresh_token).toBeUndefined();
  });

  it("issues a JWT access token for requested jwt, and by default an opaque access token of type access_token (RFC 8693 2.1, spec 2.2)", async () => {
    const { access_token } = await userTokens(user);
    const r = await exchange({ subject_token: access_token, subject_token_type: TT.access, requested_token_type: TT.jwt });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ token_type: "Bearer", issued_token_type: TT.jwt });
    const at = (await verify(t, r.body.access_token)).payload;
    expect(at).toMatchObject({ sub: user.id, client_id: client.id });
    expect(at.act).toBeUndefined();
    // The client is registered for JWT access tokens: the default is still the access_token type.
    expect(client.accessTokenType).toBe("jwt");
    const d = await exchange({ subject_token: access_token, subject_token_type: TT.access });
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ token_type: "Bearer", issued_token_type: TT.access });
    expect(d.body.access_token.split(".")).toHaveLength(1);
    const introspected = await fetch(t.baseUrl + "/oauth/v2/introspect", {
      method: "POST",
      headers: { authorization: basic(client.id, secret), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: d.body.access_token }),
    });
    expect(await introspected.json()).toMatchObject({ active: true, sub: user.id, client_id: client.id });
  });

  it("accepts an opaque access token as subject and returns a refresh token for offline_access", async () => {
    const opaque = await makeClient(t, { accessTokenType: "opaque" });
    const { access_token } = await userTokens(user, opaque.client, opaque.secret!);
    const r = await exchange({ subject_token: access_token, subject_token_type: TT.access, scope: "openid offline_access" }, opaque.client, opaque.secret!);
    expect(r.status).toBe(200);
    expect(r.body.issued_token_type).toBe(TT.access);
    expect(r.body.refresh_token).toBeTruthy();
  });

  it("issues an ID token with token_type N_A for requested id_token, from an ID token subject", async () => {
    const { id_token } = await userTokens(user);
    const r = await exchange({ subject_token: id_token, subject_token_type: TT.id, requested_token_type: TT.id, scope: "openid" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ token_type: "N_A", issued_token_type: TT.id });
    const id = (await verify(t, r.body.access_token)).payload;
    expect(id).toMatchObject({ sub: user.id, aud: client.id, azp: client.id });
  });

  it("refuses the token types the table does not allow", async () => {
    const body = await userTokens(user);
    const cases: [Record<string, string>, string][] = [
      [{ subject_token: body.refresh_token, subject_token_type: TT.refresh }, "invalid_request"],
      [{ subject_token: body.access_token, subject_token_type: TT.access, requested_token_type: TT.refresh }, "invalid_request"],
      [{ subject_token: body.access_token, subject_token_type: TT.access, requested_token_type: TT.userId }, "invalid_request"],
      [{ subject_token: body.access_token, subject_token_type: TT.access, actor_token: user.id, actor_token_type: TT.userId }, "invalid_request"],
      [{ subject_token: body.access_token, subject_token_type: TT.access, actor_token: body.refresh_token, actor_token_type: TT.refresh }, "invalid_request"],
      [{ subject_token: user.id, subject_token_type: TT.userId }, "invalid_request"],
      [{ subject_token: body.access_token, subject_token_type: TT.jwt }, "invalid_request"],
      [{ subject_token: body.access_token, subject_token_type: "urn:x:unknown" }, "invalid_request"],
      [{ subject_token: body.access_token, subject_token_type: TT.access, actor_token: body.access_token }, "invalid_request"],
      [{ subject_token: "garbage", subject_token_type: TT.access }, "invalid_request"],
      [{ subject_token_type: TT.access }, "invalid_request"],
      [{ subject_token: body.access_token, subject_token_type: TT.access, resource: "https://api.example" }, "invalid_target"],
      [{ subject_token: body.access_token, subject_token_type: TT.access, scope: "openid phone" }, "invalid_scope"],
    ];
    for (const [p, error] of cases) {
      const r = await exchange(p);
      expect(r.status, JSON.stringify(p).slice(0, 120)).toBe(400);
      expect(r.body.error, JSON.stringify(p).slice(0, 120)).toBe(error);
    }
  });

  it("refuses a jwt as actor_token even when it is a valid token of ours (spec 2.2: not allowed)", async () => {
    await features({ tokenExchange: true, impersonation: true });
    const subject = (await userTokens(user)).access_token;
    const actorJwt = (await userTokens(admin)).access_token;
    const r = await exchange({ subject_token: subject, subject_token_type: TT.access, actor_token: actorJwt, actor_token_type: TT.jwt });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_request");
    expect(r.body.error_description).toMatch(/actor_token_type/);
  });

  it("accepts an ID token as actor_token (spec 2.2: allowed) and names its user in act", async () => {
    await features({ tokenExchange: true, impersonation: true });
    const subject = (await userTokens(user)).access_token;
    const actorId = (await userTokens(admin)).id_token;
    const r = await exchange({ subject_token: subject, subject_token_type: TT.access, actor_token: actorId, actor_token_type: TT.id, requested_token_type: TT.jwt });
    expect(r.status).toBe(200);
    expect((await verify(t, r.body.access_token)).payload).toMatchObject({ sub: user.id, act: { sub: admin.id } });
  });

  it("issues no ID token when the scope lacks openid, whatever the requested token type", async () => {
    await features({ tokenExchange: true, impersonation: false });
    const { access_token } = await userTokens(user);
    for (const requested_token_type of [TT.access, TT.jwt]) {
      const r = await exchange({ subject_token: access_token, subject_token_type: TT.access, requested_token_type, scope: "profile email" });
      expect(r.status, requested_token_type).toBe(200);
      expect(r.body.scope).toBe("profile email");
      expect(r.body).not.toHaveProperty("id_token");
    }
  });

  it("works for a public client that sends only client_id (spec 5: all four methods)", async () => {
    await features({ tokenExchange: true, impersonation: false });
    const { client: pub } = await makeClient(t, { authMethod: "none" });
    const { code } = await makeCode(t, { client: pub, user, scopes: ["openid", "email"], challenge: CHALLENGE });
    const first = await token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb", client_id: pub.id, code_verifier: VERIFIER });
    expect(first.status).toBe(200);
    const r = await token(t, { grant_type: GT, subject_token: first.body.access_token, subject_token_type: TT.access, requested_token_type: TT.jwt, client_id: pub.id });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ token_type: "Bearer", issued_token_type: TT.jwt });
    expect((await verify(t, r.body.access_token)).payload).toMatchObject({ sub: user.id, client_id: pub.id });
  });

  it("keeps the audience within the subject's and actor's audiences", async () => {
    const other = await makeClient(t);
    const { access_token } = await userTokens(user);
    const ok = await exchange({ subject_token: access_token, subject_token_type: TT.access, audience: client.id, requested_token_type: TT.jwt });
    expect(ok.status).toBe(200);
    expect((await verify(t, ok.body.access_token)).payload.aud).toBe(client.id);
    const outside = await exchange({ subject_token: access_token, subject_token_type: TT.access, audience: other.client.id });
    expect(outside.status).toBe(400);
    expect(outside.body.error).toBe("invalid_target");
  });

  it("allows an audience of the actor's token too, and answers invalid_target for one outside both (RFC 8693 2.2.2)", async () => {
    await features({ tokenExchange: true, impersonation: false });
    const other = await makeClient(t);
    const third = await makeClient(t);
    const subject = (await userTokens(user)).access_token;
    // The same user acting through another application: delegation, not impersonation.
    const actor = (await userTokens(user, other.client, other.secret!)).access_token;
    const p = { subject_token: subject, subject_token_type: TT.access, actor_token: actor, actor_token_type: TT.access, requested_token_type: TT.jwt };
    // RFC 8693 2.1: audience may be repeated, one value per parameter.
    const withAudiences = (params: Record<string, string>, audiences: string[]) => {
      const body = new URLSearchParams({ grant_type: GT, ...params });
      for (const a of audiences) body.append("audience", a);
      return token(t, {}, { auth: basic(client.id, secret), body: body.toString() });
    };
    const both = await withAudiences(p, [client.id, other.client.id]);
    expect(both.status).toBe(200);
    expect((await verify(t, both.body.access_token)).payload.aud).toEqual([client.id, other.client.id]);
    for (const audiences of [[third.client.id], [other.client.id, third.client.id], ["https://api.example"]]) {
      const r = await withAudiences(p, audiences);
      expect(r.status, audiences.join(" ")).toBe(400);
      expect(r.body.error, audiences.join(" ")).toBe("invalid_target");
    }
    // A subject without an audience (a user id) and an actor: only the actor's audience.
    await features({ tokenExchange: true, impersonation: true });
    const adminActor = (await userTokens(admin, other.client, other.secret!)).access_token;
    const byId = { subject_token: user.id, subject_token_type: TT.userId, actor_token: adminActor, actor_token_type: TT.access };
    expect((await exchange({ ...byId, audience: other.client.id })).status).toBe(200);
    expect((await exchange({ ...byId, audience: client.id })).body.error).toBe("invalid_target");
  });

  it("allows impersonation only with the feature and an actor holding the impersonation role, and marks it with act", async () => {
    const subject = (await userTokens(user)).access_token;
    const actorOk = (await userTokens(admin)).access_token;
    const actorPlain = (await userTokens(await makeUser(t))).access_token;
    const p = { subject_token: subject, subject_token_type: TT.access, actor_token: actorOk, actor_token_type: TT.access, requested_token_type: TT.jwt };

    await features({ tokenExchange: true, impersonation: false });
    expect((await exchange(p)).body.error).toBe("invalid_request");

    await features({ tokenExchange: true, impersonation: true });
    const noRole = await exchange({ ...p, actor_token: actorPlain });
    expect(noRole.status).toBe(400);
    expect(noRole.body.error).toBe("invalid_request");

    const r = await exchange(p);
    expect(r.status).toBe(200);
    const at = (await verify(t, r.body.access_token)).payload;
    expect(at.sub).toBe(user.id);
    expect(at.act).toEqual({ sub: admin.id });
    expect((await verify(t, r.body.id_token)).payload.act).toEqual({ sub: admin.id });
  });

  it("takes a user id subject only together with an actor", async () => {
    await features({ tokenExchange: true, impersonation: true });
    const actor = (await userTokens(admin)).access_token;
    const r = await exchange({ subject_token: user.id, subject_token_type: TT.userId, actor_token: actor, actor_token_type: TT.access, requested_token_type: TT.jwt, scope: "openid" });
    expect(r.status).toBe(200);
    const at = (await verify(t, r.body.access_token)).payload;
    expect(at).toMatchObject({ sub: user.id, act: { sub: admin.id } });
    const unknown = await exchange({ subject_token: "999", subject_token_type: TT.userId, actor_token: actor, actor_token_type: TT.access });
    expect(unknown.body.error).toBe("invalid_request");
  });

  it("takes a jwt subject signed by the client's registered key, short-lived and used once, only with an actor", async () => {
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: "c1", alg: "RS256" };
    const pkj = (await makeClient(t, { authMethod: "private_key_jwt", jwks: { keys: [jwk] } })).client;
    const now = Math.floor(Date.now() / 1000);
    const sign = (key: CryptoKey, o: { exp?: number; jti?: string | null } = {}) => {
      const jwt = new SignJWT({}).setProtectedHeader({ alg: "RS256", kid: "c1" }).setIssuer(pkj.id).setSubject(user.id).setAudience(t.issuer).setIssuedAt(now).setExpirationTime(o.exp ?? now + 120);
      if (o.jti !== null) jwt.setJti(o.jti ?? randomToken(8));
      return jwt.sign(key);
    };
    const call = await jwtSubjectExchange(pkj.id, "c1");
    const subject = await sign(keys.privateKey);
    const r = await call(subject);
    expect(r.status).toBe(200);
    expect((await verify(t, r.body.access_token)).payload).toMatchObject({ sub: user.id, act: { sub: admin.id } });
    const foreign = await generateKeyPair("RS256");
    // Like a client assertion: our keys only, a jti used once, and a short lifetime.
    for (const bad of [await sign(foreign.privateKey), subject, await sign(keys.privateKey, { jti: null }), await sign(keys.privateKey, { exp: now + 3600 })]) {
      const res = await call(bad);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_request");
    }
  });

  it("caps the exchanged token at the subject token's exp, also when the result is exchanged again", async () => {
    await features({ tokenExchange: true, impersonation: false });
    // Client A's tokens live 30 s; client (B) and a third client would issue 900 s tokens.
    const a = await makeClient(t, { accessTokenLifetime: 30, idTokenLifetime: 30 });
    const third = await makeClient(t);
    const subject = (await userTokens(user, a.client, a.secret!, ["openid", "profile"])).access_token;
    const subjectClaims = (await verify(t, subject)).payload;
    expect(subjectClaims.exp! - subjectClaims.iat!).toBe(30);
    const r = await exchange({ subject_token: subject, subject_token_type: TT.access, requested_token_type: TT.jwt, scope: "openid" });
    expect(r.status).toBe(200);
    const at = (await verify(t, r.body.access_token)).payload;
    // No audience asked for: the subject's is kept, within the subject's lifetime.
    expect(at).toMatchObject({ sub: user.id, client_id: client.id, aud: a.client.id });
    expect(at.exp).toBeLessThanOrEqual(subjectClaims.exp!);
    expect(r.body.expires_in).toBe(at.exp! - at.iat!);
    expect(r.body.expires_in).toBeLessThanOrEqual(30);
    expect((await verify(t, r.body.id_token)).payload.exp).toBeLessThanOrEqual(subjectClaims.exp!);

    const again = await exchange({ subject_token: r.body.access_token, subject_token_type: TT.access, requested_token_type: TT.jwt }, third.client, third.secret!);
    expect(again.status).toBe(200);
    const at2 = (await verify(t, again.body.access_token)).payload;
    expect(at2.exp).toBeLessThanOrEqual(at.exp!);
    expect(again.body.expires_in).toBe(at2.exp! - at2.iat!);
    expect(again.body.expires_in).toBeLessThanOrEqual(30);
  });

  it("refuses a jwt subject token whose registered claims have the wrong types (RFC 7519 4.1), issuing nothing", async () => {
    await features({ tokenExchange: true, impersonation: true });
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: "c2", alg: "RS256" };
    const pkj = (await makeClient(t, { authMethod: "private_key_jwt", jwks: { keys: [jwk] } })).client;
    const now = Math.floor(Date.now() / 1000);
    const signed = (claims: Record<string, unknown>) =>
      new SignJWT({ iss: pkj.id, sub: user.id, aud: t.issuer, iat: now, exp: now + 120, jti: randomToken(8), ...claims }).setProtectedHeader({ alg: "RS256", kid: "c2" }).sign(keys.privateKey);
    const call = await jwtSubjectExchange(pkj.id, "c2");
    for (const claims of [{ aud: 5 }, { aud: [t.issuer, 5] }, { aud: {} }, { sub: 5 }, { iat: "now" }]) {
      const r = await call(await signed(claims));
      expect(r.status, JSON.stringify(claims)).toBe(400);
      expect(r.body.error, JSON.stringify(claims)).toBe("invalid_request");
      expect(r.body.access_token, JSON.stringify(claims)).toBeUndefined();
    }
    // The same token with well-formed claims is accepted.
    const ok = await call(await signed({}));
    expect(ok.status).toBe(200);
  });

  it("refuses a revoked subject token", async () => {
    const { client: c2, secret: s2 } = await makeClient(t);
    const { code } = await makeCode(t, { client: c2, user });
    const params = { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb" };
    const first = await token(t, params, { auth: basic(c2.id, s2!) });
    await token(t, params, { auth: basic(c2.id, s2!) }); // replay revokes the grant
    const r = await exchange({ subject_token: first.body.access_token, subject_token_type: TT.access });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_request");
  });
});
