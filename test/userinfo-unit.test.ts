import { beforeEach, describe, expect, it } from "vitest";
import type { Engine } from "@/lib/engine";
import { revokeToken } from "@/lib/oauth/revoke";
import { handleUserinfo } from "@/lib/oauth/userinfo";
import type { Client } from "@/lib/store/clients";
import type { User } from "@/lib/store/users";
import { ISSUER, REDIRECT, runGrant, secretClient, seedCode, unitWorld } from "./fakes/factories";
import type { MemoryStore } from "./fakes/memory-store";

/**
 * GET and POST /oidc/v1/userinfo (OIDC Core 5.3, spec 4.5) against the in-memory store: the claims
 * of the granted scopes, and RFC 6750 3 errors with their WWW-Authenticate challenge.
 */

let m: MemoryStore;
let engine: Engine;
let rp: Client;
let user: User;

beforeEach(async () => {
  ({ m, engine, rp, user } = await unitWorld({ user: { phone: "+41 44 000 00 00", phoneVerified: true, nickname: "jd" } }));
});

async function tokens(scopes: string[], client: Client = rp) {
  const code = await seedCode(m, { client, user, scopes });
  return runGrant(m, "authorization_code", { code, redirect_uri: REDIRECT }, client);
}

async function userinfo(init: { bearer?: string; authorization?: string; method?: string; body?: Record<string, string>; query?: string } = {}) {
  const headers: Record<string, string> = {};
  if (init.bearer !== undefined) headers.authorization = `Bearer ${init.bearer}`;
  if (init.authorization !== undefined) headers.authorization = init.authorization;
  if (init.body) headers["content-type"] = "application/x-www-form-urlencoded";
  const res = await handleUserinfo(
    engine,
    new Request(`${ISSUER}/oidc/v1/userinfo${init.query ?? ""}`, {
      method: init.method ?? (init.body ? "POST" : "GET"),
      headers,
      body: init.body ? new URLSearchParams(init.body).toString() : undefined,
    }),
  );
  const text = await res.text();
  return { res, status: res.status, challenge: res.headers.get("www-authenticate"), body: (text ? JSON.parse(text) : null) as Record<string, unknown> | null };
}

describe("claims by scope", () => {
  it("openid alone: only sub", async () => {
    const t = await tokens(["openid"]);
    const r = await userinfo({ bearer: t.access_token });
    expect(r.status).toBe(200);
    expect(r.res.headers.get("cache-control")).toContain("no-store");
    expect(r.body).toEqual({ sub: user.id });
  });

  it("profile and email: the name claims, the login name, the address and whether it is verified; no phone", async () => {
    const t = await tokens(["openid", "profile", "email"]);
    const r = await userinfo({ bearer: t.access_token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      sub: user.id,
      name: "Jane Doe",
      given_name: "Jane",
      family_name: "Doe",
      nickname: "jd",
      preferred_username: "jane@idp.unit",
      email: "jane@example.com",
      email_verified: true,
      updated_at: Math.floor(user.updatedAt.getTime() / 1000),
    });
    expect(r.body).not.toHaveProperty("phone_number");
  });

  it("phone: the number and whether it is verified, and no profile or email claims", async () => {
    const t = await tokens(["openid", "phone"]);
    const r = await userinfo({ bearer: t.access_token });
    expect(r.body).toEqual({ sub: user.id, phone_number: "+41 44 000 00 00", phone_number_verified: true });
  });

  it("POST with the token in the form body (RFC 6750 2.2) answers the same", async () => {
    const t = await tokens(["openid", "email"]);
    const r = await userinfo({ body: { access_token: t.access_token } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ sub: user.id, email: "jane@example.com", email_verified: true });
  });

  it("an opaque access token works as a JWT does", async () => {
    const opaque = secretClient("rp", "rp-secret", { accessTokenType: "opaque" });
    m.clients.set(opaque.id, opaque);
    const t = await tokens(["openid", "email"], opaque);
    expect(t.access_token.split(".")).toHaveLength(1);
    expect((await userinfo({ bearer: t.access_token })).body).toEqual({ sub: user.id, email: "jane@example.com", email_verified: true });
  });
});

describe("tokens that do not open userinfo: 401 invalid_token (403 insufficient_scope) with a Bearer challenge", () => {
  function expectInvalidToken(r: Awaited<ReturnType<typeof userinfo>>) {
    expect(r.status).toBe(401);
    expect(r.body?.error).toBe("invalid_token");
    expect(r.challenge).toMatch(/^Bearer realm="torii", error="invalid_token"/);
  }

  it("a revoked access token", async () => {
    const t = await tokens(["openid", "email"]);
    expect((await userinfo({ bearer: t.access_token })).status).toBe(200);
    expect(await revokeToken({ store: m.store, issuer: ISSUER }, rp, t.access_token)).toMatchObject({ revoked: true });
    expectInvalidToken(await userinfo({ bearer: t.access_token }));
  });

  it("a revoked grant (its refresh token revoked) takes the access token with it", async () => {
    const t = await tokens(["openid", "offline_access"]);
    await revokeToken({ store: m.store, issuer: ISSUER }, rp, t.refresh_token!, "refresh_token");
    expectInvalidToken(await userinfo({ bearer: t.access_token }));
  });

  it("an expired access token", async () => {
    const t = await tokens(["openid"]);
    m.clock.advanceSeconds(rp.accessTokenLifetime + 120);
    expectInvalidToken(await userinfo({ bearer: t.access_token }));
  });

  it("a refresh token, an ID token and an unknown value are not access tokens", async () => {
    const t = await tokens(["openid", "offline_access"]);
    expectInvalidToken(await userinfo({ bearer: t.refresh_token! }));
    expectInvalidToken(await userinfo({ bearer: t.id_token! }));
    expectInvalidToken(await userinfo({ bearer: "unknown-token" }));
  });

  it("a client credentials token is about no user", async () => {
    const t = await runGrant(m, "client_credentials", { scope: "openid" }, rp);
    const r = await userinfo({ bearer: t.access_token });
    expectInvalidToken(r);
    expect(r.body?.error_description).toMatch(/not about a user/);
  });

  it("a user's token without openid: 403 insufficient_scope naming the scope", async () => {
    const t = await tokens(["profile"]);
    const r = await userinfo({ bearer: t.access_token });
    expect(r.status).toBe(403);
    expect(r.body?.error).toBe("insufficient_scope");
    expect(r.challenge).toContain('error="insufficient_scope"');
    expect(r.challenge).toContain('scope="openid"');
  });
});

describe("missing or malformed bearer (RFC 6750 3.1)", () => {
  it("no token at all: 401 with a bare challenge, no error code and no body", async () => {
    const r = await userinfo();
    expect(r.status).toBe(401);
    expect(r.challenge).toBe('Bearer realm="torii"');
    expect(r.body).toBeNull();
  });

  it("a token in the query string is not accepted: the same as none", async () => {
    const t = await tokens(["openid"]);
    const r = await userinfo({ query: `?access_token=${t.access_token}` });
    expect(r.status).toBe(401);
    expect(r.challenge).toBe('Bearer realm="torii"');
  });

  it("another scheme (Basic) carries no bearer token: 401 without an error code", async () => {
    const r = await userinfo({ authorization: "Basic cnA6cnAtc2VjcmV0" });
    expect(r.status).toBe(401);
    expect(r.challenge).toBe('Bearer realm="torii"');
  });

  for (const [what, header] of [
    ["the scheme alone", "Bearer"],
    ["two words", "Bearer abc def"],
    ["characters outside b64token", "Bearer abc!def"],
  ] as const) {
    it(`${what}: 400 invalid_request`, async () => {
      const r = await userinfo({ authorization: header });
      expect(r.status).toBe(400);
      expect(r.body?.error).toBe("invalid_request");
      expect(r.challenge).toContain('error="invalid_request"');
    });
  }

  it("a token in both the header and the body: 400 invalid_request", async () => {
    const t = await tokens(["openid"]);
    const r = await userinfo({ bearer: t.access_token, body: { access_token: t.access_token } });
    expect(r.status).toBe(400);
    expect(r.body?.error).toBe("invalid_request");
  });
});
