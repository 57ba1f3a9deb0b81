import { decodeJwt } from "jose";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { sha256 } from "@/lib/crypto";
import type { Engine } from "@/lib/engine";
import { handleIntrospect } from "@/lib/oauth/introspect";
import { revokeToken } from "@/lib/oauth/revoke";
import type { Client } from "@/lib/store/clients";
import type { User } from "@/lib/store/users";
import { basicAuth, formPost, ISSUER, makeApi, REDIRECT, runGrant, secretClient, seedCode, unitWorld } from "./fakes/factories";
import type { MemoryStore } from "./fakes/memory-store";

/**
 * POST /oauth/v2/introspect (RFC 7662, spec 4.4) against the in-memory store: what a client or an
 * API (resource server) learns about a token, and who may ask.
 */

const SECRET = "rp-secret";
let m: MemoryStore;
let engine: Engine;
let rp: Client;
let user: User;

beforeEach(async () => {
  ({ m, engine, rp, user } = await unitWorld({ secret: SECRET }));
});

async function introspect(token: string, headers: Record<string, string> = { authorization: basicAuth("rp", SECRET) }, extra: Record<string, string> = {}) {
  const res = await handleIntrospect(engine, formPost("/oauth/v2/introspect", { token, ...extra }, headers));
  return { res, body: (await res.json()) as Record<string, unknown> };
}

/** Access (and refresh) token from the code grant, issued to `client`. */
async function codeTokens(client: Client = rp, scopes = ["openid", "profile", "email", "offline_access"]) {
  const code = await seedCode(m, { client, user, scopes });
  return runGrant(m, "authorization_code", { code, redirect_uri: REDIRECT }, client);
}

describe("introspection of active access tokens", () => {
  it("a JWT access token: active with the registered fields, the login name and the claims of its scopes", async () => {
    const t = await codeTokens();
    const { res, body } = await introspect(t.access_token);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toContain("no-store");
    const jwt = decodeJwt(t.access_token);
    expect(body).toMatchObject({
      active: true,
      client_id: "rp",
      sub: user.id,
      token_type: "Bearer",
      iss: ISSUER,
      jti: jwt.jti,
      exp: jwt.exp,
      iat: jwt.iat,
      scope: "openid profile email offline_access",
      username: "jane@idp.unit",
      email: "jane@example.com",
      given_name: "Jane",
    });
    // No phone scope, no phone claims; no address scope, no address.
    expect(body).not.toHaveProperty("phone_number");
    expect(body).not.toHaveProperty("address");
  });

  it("the claims follow the granted scopes: openid alone gives no email or name", async () => {
    const t = await codeTokens(rp, ["openid"]);
    const { body } = await introspect(t.access_token);
    expect(body.active).toBe(true);
    expect(body.scope).toBe("openid");
    expect(body).not.toHaveProperty("email");
    expect(body).not.toHaveProperty("given_name");
  });

  it("an opaque access token: active with its stored lifetime, then inactive once it has passed", async () => {
    const opaque = secretClient("rp", SECRET, { accessTokenType: "opaque", accessTokenLifetime: 300 });
    m.clients.set(opaque.id, opaque);
    const t = await codeTokens(opaque);
    expect(t.access_token.split(".")).toHaveLength(1);
    const { body } = await introspect(t.access_token);
    expect(body).toMatchObject({ active: true, client_id: "rp", sub: user.id, token_type: "Bearer", username: "jane@idp.unit" });
    expect(body.exp).toBe((body.iat as number) + 300);
    m.clock.advanceSeconds(301);
    expect((await introspect(t.access_token)).body).toEqual({ active: false });
  });
});

describe("tokens that are not active access tokens answer {active:false} and nothing else", () => {
  it("a refresh token, whatever token_type_hint says", async () => {
    const t = await codeTokens();
    expect((await introspect(t.refresh_token!)).body).toEqual({ active: false });
    expect((await introspect(t.refresh_token!, undefined, { token_type_hint: "refresh_token" })).body).toEqual({ active: false });
  });

  it("an ID token", async () => {
    const t = await codeTokens();
    expect((await introspect(t.id_token!)).body).toEqual({ active: false });
  });

  it("a revoked JWT and a revoked opaque token", async () => {
    const jwt = await codeTokens();
    expect((await introspect(jwt.access_token)).body.active).toBe(true);
    expect(await revokeToken({ store: m.store, issuer: ISSUER }, rp, jwt.access_token)).toMatchObject({ revoked: true });
    const revoked = await introspect(jwt.access_token);
    expect(revoked.res.status).toBe(200);
    expect(revoked.body).toEqual({ active: false });

    const opaqueClient = secretClient("rp", SECRET, { accessTokenType: "opaque" });
    m.clients.set(opaqueClient.id, opaqueClient);
    const opaque = await codeTokens(opaqueClient);
    expect(await revokeToken({ store: m.store, issuer: ISSUER }, opaqueClient, opaque.access_token)).toMatchObject({ revoked: true });
    expect((await introspect(opaque.access_token)).body).toEqual({ active: false });
  });

  it("an expired JWT: active until its exp on the store's clock, not after", async () => {
    const t = await codeTokens();
    m.clock.advanceSeconds(rp.accessTokenLifetime - 5);
    expect((await introspect(t.access_token)).body.active).toBe(true);
    m.clock.advanceSeconds(10 + 60);
    expect((await introspect(t.access_token)).body).toEqual({ active: false });
  });

  it("an unknown opaque value, a JWT signed by someone else, and a token of a locked user", async () => {
    expect((await introspect("no-such-token")).body).toEqual({ active: false });
    const t = await codeTokens();
    const [h, p] = t.access_token.split(".");
    expect((await introspect(`${h}.${p}.${"A".repeat(342)}`)).body).toEqual({ active: false });
    m.users.set(user.id, { ...user, locked: true });
    expect((await introspect(t.access_token)).body).toEqual({ active: false });
  });
});

describe("a token whose checks cannot be made now", () => {
  // What postgres.js reports when the database went away under a query (lib/db/unavailable.ts).
  const cut = () => Object.assign(new Error("write CONNECTION_CLOSED"), { code: "CONNECTION_CLOSED" });

  it("is not answered inactive when its revocation records cannot be read: 503 temporarily_unavailable, JWT or sealed", async () => {
    const jwt = await codeTokens();
    const opaqueClient = secretClient("rp", SECRET, { accessTokenType: "opaque" });
    m.clients.set(opaqueClient.id, opaqueClient);
    const opaque = await codeTokens(opaqueClient);
    vi.spyOn(engine.store.tokens, "isAccessTokenRevoked").mockRejectedValue(cut());
    for (const token of [jwt.access_token, opaque.access_token]) {
      const { res, body } = await introspect(token);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      expect(body).toEqual({ error: "temporarily_unavailable", error_description: "The service is temporarily unavailable; try again shortly." });
    }
    // A token that is not ours fails before anything is read: still inactive, not unavailable.
    const [h, p] = jwt.access_token.split(".");
    expect((await introspect(`${h}.${p}.${"A".repeat(342)}`)).body).toEqual({ active: false });
  });

  it("is not answered inactive when the signing keys cannot be read", async () => {
    const jwt = await codeTokens();
    vi.spyOn(engine.store.keys, "verification").mockRejectedValue(cut());
    expect((await introspect(jwt.access_token)).res.status).toBe(503);
  });
});

describe("client authentication at introspection", () => {
  it("no credentials, a wrong secret, or an unknown client: 401 invalid_client", async () => {
    const t = await codeTokens();
    const none = await introspect(t.access_token, {});
    expect(none.res.status).toBe(401);
    expect(none.body.error).toBe("invalid_client");

    const wrong = await introspect(t.access_token, { authorization: basicAuth("rp", "not-the-secret") });
    expect(wrong.res.status).toBe(401);
    expect(wrong.body.error).toBe("invalid_client");
    expect(wrong.res.headers.get("www-authenticate")).toMatch(/^Basic /);
    expect(wrong.body).not.toHaveProperty("active");

    const unknown = await introspect(t.access_token, { authorization: basicAuth("nobody", SECRET) });
    expect(unknown.res.status).toBe(401);
    expect(unknown.body.error).toBe("invalid_client");
  });

  it("client_secret_post is not accepted at introspection (spec 5: Basic or private_key_jwt), even with the right secret", async () => {
    const post = secretClient("poster", "post-secret", { authMethod: "client_secret_post" });
    m.clients.set(post.id, post);
    const t = await codeTokens();
    const r = await introspect(t.access_token, {}, { client_id: "poster", client_secret: "post-secret" });
    expect(r.res.status).toBe(401);
    expect(r.body.error).toBe("invalid_client");
  });

  it("a public client (none) cannot introspect", async () => {
    const pub = secretClient("spa", "unused", { authMethod: "none", secretHash: null });
    m.clients.set(pub.id, pub);
    const t = await codeTokens();
    const r = await introspect(t.access_token, {}, { client_id: "spa" });
    expect(r.res.status).toBe(401);
    expect(r.body.error).toBe("invalid_client");
  });

  it("a missing token parameter is invalid_request once the client is authenticated", async () => {
    const res = await handleIntrospect(engine, formPost("/oauth/v2/introspect", {}, { authorization: basicAuth("rp", SECRET) }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_request");
  });
});

describe("who may see a token", () => {
  it("another authenticated client is told {active:false} about a token that is not for it", async () => {
    const other = secretClient("other", "other-secret");
    m.clients.set(other.id, other);
    const t = await codeTokens();
    const r = await introspect(t.access_token, { authorization: basicAuth("other", "other-secret") });
    expect(r.res.status).toBe(200);
    expect(r.body).toEqual({ active: false });
    // The token's own client still sees it active.
    expect((await introspect(t.access_token)).body.active).toBe(true);
  });

  it("an API introspects with its own credentials: active for a token whose audience it is (with the roles it grants), inactive for others", async () => {
    const api = makeApi({ identifier: "https://api.unit/", secretHash: sha256("api-secret"), roles: [{ key: "reader", name: "Reader", description: "" }] });
    m.apis.push(api);
    const machine = secretClient("machine", "machine-secret", { apiScopes: { [api.identifier]: ["read"] } });
    m.clients.set(machine.id, machine);
    m.roles.set("client:machine", new Map([[api.id, ["reader"]]]));
    const forApi = await runGrant(m, "client_credentials", { resource: api.identifier }, machine);
    const apiAuth = { authorization: basicAuth(api.identifier, "api-secret") };

    const seen = await introspect(forApi.access_token, apiAuth);
    expect(seen.res.status).toBe(200);
    expect(seen.body).toMatchObject({ active: true, aud: api.identifier, client_id: "machine", sub: "machine", scope: "read", roles: ["reader"] });
    expect(seen.body).not.toHaveProperty("username");

    const notForApi = await codeTokens();
    expect((await introspect(notForApi.access_token, apiAuth)).body).toEqual({ active: false });

    const wrong = await introspect(forApi.access_token, { authorization: basicAuth(api.identifier, "wrong") });
    expect(wrong.res.status).toBe(401);
    expect(wrong.body.error).toBe("invalid_client");
  });
});
