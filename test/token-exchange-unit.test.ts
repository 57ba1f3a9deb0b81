import { decodeJwt, jwtVerify } from "jose";
import { beforeEach, describe, expect, it } from "vitest";
import { resolveAccessToken } from "@/lib/oauth/access-token";
import { revokeToken } from "@/lib/oauth/revoke";
import type { Client } from "@/lib/store/clients";
import type { Settings } from "@/lib/store/settings";
import type { User } from "@/lib/store/users";
import { ISSUER, makeApi, makeUser, publishedKeys, REDIRECT, refused, runGrant, secretClient, seedCode, unitSettings } from "./fakes/factories";
import { MemoryStore } from "./fakes/memory-store";

/**
 * Token exchange (RFC 8693, spec 4.3.5) against the in-memory store: a subject's access token
 * exchanged for a new token, narrower scopes, audiences within the subject's, and resources
 * (RFC 8707) that must be APIs the client may use (`invalid_target` otherwise).
 */

const GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
const AT = "urn:ietf:params:oauth:token-type:access_token";
const settings: Settings = unitSettings({ features: { tokenExchange: true, impersonation: false } });
let m: MemoryStore;
let rp: Client;
let user: User;

beforeEach(async () => {
  m = await MemoryStore.create(settings);
  rp = secretClient("rp", "rp-secret", { grantTypes: ["authorization_code", "refresh_token", GRANT] });
  m.clients.set(rp.id, rp);
  user = makeUser();
  m.users.set(user.id, user);
});

async function subjectToken(scopes = ["openid", "profile", "email"], client: Client = rp) {
  const code = await seedCode(m, { client, user, scopes });
  return runGrant(m, "authorization_code", { code, redirect_uri: REDIRECT }, client);
}

const exchange = (form: Record<string, string>, client: Client = rp) => runGrant(m, GRANT, form, client, settings);
const env = () => ({ store: m.store, issuer: ISSUER });

describe("exchanging a subject's access token", () => {
  it("the default answer is an opaque access token for the same user, with an ID token for openid", async () => {
    const subject = await subjectToken();
    const body = await exchange({ subject_token: subject.access_token, subject_token_type: AT });
    expect(body).toMatchObject({ issued_token_type: AT, token_type: "Bearer", scope: "openid profile email", expires_in: rp.accessTokenLifetime });
    expect(body.access_token.split(".")).toHaveLength(1);
    const resolved = await resolveAccessToken(env(), body.access_token);
    expect(resolved).toMatchObject({ format: "opaque", clientId: "rp", sub: user.id, scopes: ["openid", "profile", "email"], audience: ["rp"] });
    const { payload } = await jwtVerify(body.id_token!, publishedKeys(m), { issuer: ISSUER, audience: "rp", currentDate: new Date(m.clock.now()) });
    expect(payload.sub).toBe(user.id);
    expect(m.state.audit.at(-1)?.event).toMatchObject({ action: "token.exchanged", targetId: user.id, clientId: "rp" });
  });

  it("requested_token_type jwt: a JWT access token signed by our key; a narrower scope is kept as asked", async () => {
    const subject = await subjectToken();
    const body = await exchange({ subject_token: subject.access_token, subject_token_type: AT, requested_token_type: "urn:ietf:params:oauth:token-type:jwt", scope: "email" });
    const { payload, protectedHeader } = await jwtVerify(body.access_token, publishedKeys(m), { issuer: ISSUER, currentDate: new Date(m.clock.now()) });
    expect(protectedHeader.typ).toBe("at+jwt");
    expect(payload).toMatchObject({ sub: user.id, client_id: "rp", scope: "email", aud: "rp" });
    expect(body.issued_token_type).toBe("urn:ietf:params:oauth:token-type:jwt");
    expect(body.id_token).toBeUndefined();
  });

  it("requested_token_type id_token: token_type N_A and an ID token of the subject", async () => {
    const subject = await subjectToken();
    const body = await exchange({ subject_token: subject.access_token, subject_token_type: AT, requested_token_type: "urn:ietf:params:oauth:token-type:id_token" });
    expect(body.token_type).toBe("N_A");
    const { payload } = await jwtVerify(body.access_token, publishedKeys(m), { issuer: ISSUER, audience: "rp", currentDate: new Date(m.clock.now()) });
    expect(payload.sub).toBe(user.id);
  });

  it("a scope beyond the subject token's is invalid_scope, and nothing is written", async () => {
    const subject = await subjectToken(["openid"]);
    const before = m.state.grants.size;
    expect(await refused(exchange({ subject_token: subject.access_token, subject_token_type: AT, scope: "openid email" }))).toBe("invalid_scope");
    expect(m.state.grants.size).toBe(before);
  });
});

describe("a bad subject token is invalid_request", () => {
  it("unknown, revoked, expired, or a refresh token presented as an access token", async () => {
    expect(await refused(exchange({ subject_token: "no-such-token", subject_token_type: AT }))).toBe("invalid_request");

    const revoked = await subjectToken(["openid", "offline_access"]);
    expect(await revokeToken(env(), rp, revoked.access_token)).toMatchObject({ revoked: true });
    expect(await refused(exchange({ subject_token: revoked.access_token, subject_token_type: AT }))).toBe("invalid_request");
    expect(await refused(exchange({ subject_token: revoked.refresh_token!, subject_token_type: AT }))).toBe("invalid_request");

    const expiring = await subjectToken();
    m.clock.advanceSeconds(rp.accessTokenLifetime + 120);
    expect(await refused(exchange({ subject_token: expiring.access_token, subject_token_type: AT }))).toBe("invalid_request");
    expect(m.state.audit.map((a) => a.event.action)).not.toContain("token.exchanged");
  });

  it("refresh_token is no subject_token_type; jwt and user_id need an actor", async () => {
    const subject = await subjectToken(["openid", "offline_access"]);
    expect(await refused(exchange({ subject_token: subject.refresh_token!, subject_token_type: "urn:ietf:params:oauth:token-type:refresh_token" }))).toBe("invalid_request");
    expect(await refused(exchange({ subject_token: subject.access_token, subject_token_type: "urn:ietf:params:oauth:token-type:jwt" }))).toBe("invalid_request");
  });

  it("an ID token presented as an access token", async () => {
    const subject = await subjectToken();
    expect(await refused(exchange({ subject_token: subject.id_token!, subject_token_type: AT }))).toBe("invalid_request");
  });
});

describe("audience and resource (RFC 8693 2.1, RFC 8707)", () => {
  it("an audience within the subject's is kept; one outside is invalid_target", async () => {
    const subject = await subjectToken();
    const ok = await exchange({ subject_token: subject.access_token, subject_token_type: AT, audience: "rp", requested_token_type: "urn:ietf:params:oauth:token-type:jwt" });
    expect(decodeJwt(ok.access_token).aud).toBe("rp");
    expect(await refused(exchange({ subject_token: subject.access_token, subject_token_type: AT, audience: "https://other.example" }))).toBe("invalid_target");
  });

  it("a resource the client may use: the token is for that API, with its scopes, lifetime and the subject's roles there", async () => {
    const api = makeApi({ id: "api-1", identifier: "https://api.unit/", accessTokenLifetime: 120, scopes: [{ name: "read", description: "" }, { name: "write", description: "" }] });
    m.apis.push(api);
    m.roles.set(`user:${user.id}`, new Map([["api-1", ["editor"]]]));
    const client = secretClient("rp", "rp-secret", { grantTypes: [GRANT], apiScopes: { [api.identifier]: ["read"] } });
    m.clients.set(client.id, client);
    const subject = await subjectToken(["openid"], client);
    const body = await exchange(
      { subject_token: subject.access_token, subject_token_type: AT, resource: api.identifier, scope: "openid read", requested_token_type: "urn:ietf:params:oauth:token-type:jwt" },
      client,
    );
    expect(body.expires_in).toBe(120);
    expect(body.scope).toBe("openid read");
    const { payload } = await jwtVerify(body.access_token, publishedKeys(m), { issuer: ISSUER, audience: api.identifier, currentDate: new Date(m.clock.now()) });
    expect(payload).toMatchObject({ sub: user.id, scope: "openid read", roles: ["editor"] });
    expect(payload.exp! - payload.iat!).toBe(120);
  });

  it("an audience that names an API (kept from the subject token): the JWT carries the subject's roles there, as introspection does", async () => {
    const api = makeApi({ id: "api-1", identifier: "https://api.unit/", scopes: [{ name: "read", description: "" }] });
    m.apis.push(api);
    m.roles.set(`user:${user.id}`, new Map([["api-1", ["editor"]]]));
    const client = secretClient("rp", "rp-secret", { grantTypes: [GRANT], apiScopes: { [api.identifier]: ["read"] } });
    m.clients.set(client.id, client);
    const JWT_TYPE = "urn:ietf:params:oauth:token-type:jwt";
    const forApi = await exchange({ subject_token: (await subjectToken(["openid"], client)).access_token, subject_token_type: AT, resource: api.identifier, scope: "openid read", requested_token_type: JWT_TYPE }, client);
    const body = await exchange({ subject_token: forApi.access_token, subject_token_type: AT, audience: api.identifier, requested_token_type: JWT_TYPE }, client);
    const { payload } = await jwtVerify(body.access_token, publishedKeys(m), { issuer: ISSUER, audience: api.identifier, currentDate: new Date(m.clock.now()) });
    expect(payload).toMatchObject({ sub: user.id, roles: ["editor"] });
  });

  it("an unknown resource, one the client may not use, several, or one that is no absolute URI: invalid_target", async () => {
    const api = makeApi({ identifier: "https://api.unit/" });
    m.apis.push(api);
    const subject = await subjectToken();
    const ask = (resource: string) => exchange({ subject_token: subject.access_token, subject_token_type: AT, resource });
    expect(await refused(ask("https://unknown.unit/"))).toBe("invalid_target");
    // rp has no apiScopes for the API: not allowed.
    expect(await refused(ask(api.identifier))).toBe("invalid_target");
    const allowed = { ...rp, apiScopes: { [api.identifier]: ["read"] } };
    m.clients.set("rp", allowed);
    expect(await refused(exchange({ subject_token: subject.access_token, subject_token_type: AT, resource: `${api.identifier} https://api2.unit/` }, allowed))).toBe("invalid_target");
    expect(await refused(ask("not-a-uri"))).toBe("invalid_target");
    expect(await refused(ask("https://api.unit/#frag"))).toBe("invalid_target");
    expect(m.state.audit.map((a) => a.event.action)).not.toContain("token.exchanged");
  });

  it("an API scope the client may not have at the resource is invalid_scope", async () => {
    const api = makeApi({ identifier: "https://api.unit/", scopes: [{ name: "read", description: "" }, { name: "write", description: "" }] });
    m.apis.push(api);
    const client = secretClient("rp", "rp-secret", { grantTypes: [GRANT], apiScopes: { [api.identifier]: ["read"] } });
    m.clients.set(client.id, client);
    const subject = await subjectToken(["openid"], client);
    expect(await refused(exchange({ subject_token: subject.access_token, subject_token_type: AT, resource: api.identifier, scope: "write" }, client))).toBe("invalid_scope");
  });
});

describe("lifetime: an exchanged token never outlives the tokens it was exchanged for", () => {
  const JWT_TYPE = "urn:ietf:params:oauth:token-type:jwt";
  const ID_TYPE = "urn:ietf:params:oauth:token-type:id_token";
  const claimsOf = async (jwt: string) => (await jwtVerify(jwt, publishedKeys(m), { issuer: ISSUER, currentDate: new Date(m.clock.now()) })).payload;
  /** A client with short-lived tokens whose access token another client (rp, 900 s) exchanges. */
  async function shortSubject(lifetime = 60, scopes = ["openid", "profile"]) {
    const short = secretClient("short", "short-secret", { accessTokenLifetime: lifetime, idTokenLifetime: lifetime });
    m.clients.set(short.id, short);
    return subjectToken(scopes, short);
  }

  it("nor does a refresh token it gives, nor what its refreshes give: they all end with the subject token", async () => {
    const subject = await shortSubject(60, ["openid", "profile", "offline_access"]);
    const subjectExp = (await claimsOf(subject.access_token)).exp!;
    const body = await exchange({ subject_token: subject.access_token, subject_token_type: AT, requested_token_type: JWT_TYPE, scope: "openid offline_access" });
    expect(body.refresh_token).toBeTruthy();
    let refreshToken = body.refresh_token!;
    for (let i = 0; i < 2; i++) {
      m.clock.advanceSeconds(20);
      const next = await runGrant(m, "refresh_token", { refresh_token: refreshToken }, rp);
      // The client's own lifetimes are 900 s and more: each token ends when the subject token does.
      expect((await claimsOf(next.access_token)).exp).toBe(subjectExp);
      expect(next.expires_in).toBe(60 - 20 * (i + 1));
      expect((await claimsOf(next.id_token!)).exp).toBe(subjectExp);
      refreshToken = next.refresh_token!;
    }
    m.clock.advanceSeconds(20);
    expect(await refused(runGrant(m, "refresh_token", { refresh_token: refreshToken }, rp))).toBe("invalid_grant");
  });

  it("a short-lived subject token: exp at most the subject's, and expires_in the real remaining lifetime", async () => {
    const subject = await shortSubject();
    const subjectExp = (await claimsOf(subject.access_token)).exp!;
    m.clock.advanceSeconds(20);
    const body = await exchange({ subject_token: subject.access_token, subject_token_type: AT, requested_token_type: JWT_TYPE, scope: "openid" });
    const at = await claimsOf(body.access_token);
    expect(at).toMatchObject({ sub: user.id, client_id: "rp", aud: "short" });
    expect(at.exp).toBe(subjectExp);
    expect(body.expires_in).toBe(40);
    expect(at.exp! - at.iat!).toBe(body.expires_in);
    expect((await claimsOf(body.id_token!)).exp).toBeLessThanOrEqual(subjectExp);
    // The default (opaque) and a requested ID token are capped the same way.
    const opaque = await exchange({ subject_token: subject.access_token, subject_token_type: AT });
    expect(opaque.expires_in).toBe(40);
    expect((await resolveAccessToken(env(), opaque.access_token))?.exp).toBe(subjectExp);
    const id = await exchange({ subject_token: subject.access_token, subject_token_type: AT, requested_token_type: ID_TYPE });
    expect(id.expires_in).toBe(40);
    expect((await claimsOf(id.access_token)).exp).toBe(subjectExp);
  });

  it("exchanging the exchanged token again does not extend it, and it ends with the subject token", async () => {
    const subject = await shortSubject();
    const subjectExp = (await claimsOf(subject.access_token)).exp!;
    let presented = subject.access_token;
    for (let i = 0; i < 3; i++) {
      m.clock.advanceSeconds(15);
      const body = await exchange({ subject_token: presented, subject_token_type: AT, requested_token_type: JWT_TYPE });
      expect((await claimsOf(body.access_token)).exp).toBe(subjectExp);
      expect(body.expires_in).toBe(60 - 15 * (i + 1));
      presented = body.access_token;
    }
    m.clock.advanceSeconds(15);
    expect(await refused(exchange({ subject_token: presented, subject_token_type: AT, requested_token_type: JWT_TYPE }))).toBe("invalid_request");
  });

  it("nor the actor token's", async () => {
    const subject = await subjectToken();
    const actor = await shortSubject(30);
    const actorExp = (await claimsOf(actor.access_token)).exp!;
    const body = await exchange({ subject_token: subject.access_token, subject_token_type: AT, actor_token: actor.access_token, actor_token_type: AT, requested_token_type: JWT_TYPE });
    expect((await claimsOf(body.access_token)).exp).toBe(actorExp);
    expect(body.expires_in).toBe(30);
  });
});
