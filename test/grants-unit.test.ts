import { createHash } from "node:crypto";
import { createLocalJWKSet, decodeJwt, jwtVerify } from "jose";
import { beforeEach, describe, expect, it } from "vitest";
import { resolveAccessToken } from "@/lib/oauth/access-token";
import { revokeToken } from "@/lib/oauth/revoke";
import type { TokenResponse } from "@/lib/oauth/grants/types";
import type { Client } from "@/lib/store/clients";
import type { User } from "@/lib/store/users";
import { MemoryStore } from "./fakes/memory-store";
import { ISSUER, makeClient, makeUser, REDIRECT, refused, runGrant, seedCode, unitSettings } from "./fakes/factories";

/**
 * The grants against the repository interfaces alone (lib/store/repositories.ts), with an
 * in-memory store: no database, no HTTP. What they show: each grant's writes happen inside one
 * transaction (a failure at any write leaves the state as it was, and the code or refresh token
 * still works), and what a client gets back. The same behaviour against PGlite and PostgreSQL is
 * in test/token-atomic.test.ts.
 */

let m: MemoryStore;
let client: Client;
let user: User;

beforeEach(async () => {
  m = await MemoryStore.create(unitSettings());
  client = makeClient();
  m.clients.set(client.id, client);
  user = makeUser();
  m.users.set(user.id, user);
});

function grant(type: string, form: Record<string, string>, c: Client = client): Promise<TokenResponse> {
  return runGrant(m, type, form, c);
}

function issueCode(scopes = ["openid", "offline_access"], codeChallenge: string | null = null): Promise<string> {
  return seedCode(m, { client, user, scopes, codeChallenge });
}

describe("authorization_code against the repositories", () => {
  it("redeems a code once: tokens signed with the store's key, one transaction, then invalid_grant and the grant revoked", async () => {
    const code = await issueCode();
    const body = await grant("authorization_code", { code, redirect_uri: REDIRECT });
    expect(body.token_type).toBe("Bearer");
    expect(body.refresh_token).toBeTruthy();
    const { payload } = await jwtVerify(body.id_token!, createLocalJWKSet(m.jwks), { issuer: ISSUER, audience: client.id });
    expect(payload).toMatchObject({ sub: user.id, nonce: "n-1", amr: ["pwd"] });
    expect(decodeJwt(body.access_token)).toMatchObject({ sub: user.id, client_id: client.id });
    expect(m.transactions).toBe(1);
    expect(m.state.audit.map((a) => a.event.action)).toEqual(["token.issued"]);

    expect(await refused(grant("authorization_code", { code, redirect_uri: REDIRECT }))).toBe("invalid_grant");
    // The replay's revocation committed although the answer was an error.
    const g = [...m.state.grants.values()][0]!;
    expect(g.revokedAt).not.toBeNull();
    expect(m.state.audit.map((a) => a.event.action)).toEqual(["token.issued", "grant.revoked"]);
  });

  for (const failAt of ["codes.markUsed", "tokens.createFamily", "tokens.insertOpaque.refresh", "audit.record"]) {
    it(`a failure at ${failAt} leaves nothing written, and the code still works once`, async () => {
      const code = await issueCode();
      const before = m.state;
      m.failNext = failAt;
      await expect(grant("authorization_code", { code, redirect_uri: REDIRECT })).rejects.toThrow(`injected failure at ${failAt}`);
      expect(m.state).toBe(before);
      expect([...m.state.codes.values()][0]!.usedAt).toBeNull();
      expect(m.state.tokens.size).toBe(0);
      expect(m.state.audit).toEqual([]);

      const body = await grant("authorization_code", { code, redirect_uri: REDIRECT });
      expect(body.access_token).toBeTruthy();
      expect(await refused(grant("authorization_code", { code, redirect_uri: REDIRECT }))).toBe("invalid_grant");
    });
  }

  it("refuses a code for another redirect URI or client, and without the verifier of its challenge, changing nothing", async () => {
    const verifier = "v".repeat(43);
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const code = await issueCode(["openid"], challenge);
    expect(await refused(grant("authorization_code", { code, redirect_uri: "https://rp.unit/other", code_verifier: verifier }))).toBe("invalid_grant");
    const other = makeClient({ id: "other-client" });
    expect(await refused(grant("authorization_code", { code, redirect_uri: REDIRECT, code_verifier: verifier }, other))).toBe("invalid_grant");
    expect(await refused(grant("authorization_code", { code, redirect_uri: REDIRECT }))).toBe("invalid_grant");
    expect(await refused(grant("authorization_code", { code, redirect_uri: REDIRECT, code_verifier: "w".repeat(43) }))).toBe("invalid_grant");
    expect([...m.state.codes.values()][0]!.usedAt).toBeNull();
    expect(m.state.audit).toEqual([]);
    expect((await grant("authorization_code", { code, redirect_uri: REDIRECT, code_verifier: verifier })).id_token).toBeTruthy();
  });
});

describe("time comes from the engine's clock", () => {
  it("a code is redeemable until its lifetime has passed on the store's clock, and tokens carry that clock's time", async () => {
    const code = await issueCode();
    m.clock.advanceSeconds(59);
    const body = await grant("authorization_code", { code, redirect_uri: REDIRECT });
    // iat is the fake clock's second, not the machine's.
    expect(decodeJwt(body.access_token).iat).toBe(Math.floor(m.clock.now() / 1000));

    const late = await issueCode();
    m.clock.advanceSeconds(60);
    expect(await refused(grant("authorization_code", { code: late, redirect_uri: REDIRECT }))).toBe("invalid_grant");
    expect([...m.state.codes.values()].filter((c) => c.usedAt === null)).toHaveLength(1);
  });
});

describe("refresh_token against the repositories", () => {
  async function firstRefresh(): Promise<string> {
    const code = await issueCode();
    return (await grant("authorization_code", { code, redirect_uri: REDIRECT })).refresh_token!;
  }

  it("rotates: the successor works, the presented token presented again revokes the family", async () => {
    const rt1 = await firstRefresh();
    const second = await grant("refresh_token", { refresh_token: rt1 });
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(rt1);
    const third = await grant("refresh_token", { refresh_token: second.refresh_token! });
    expect(third.access_token).toBeTruthy();

    expect(await refused(grant("refresh_token", { refresh_token: rt1 }))).toBe("invalid_grant");
    const family = [...m.state.families.values()][0]!;
    expect(family.revokedReason).toBe("refresh_reuse");
    expect(await refused(grant("refresh_token", { refresh_token: third.refresh_token! }))).toBe("invalid_grant");
  });

  it("a failure after the rotation leaves the presented token unrotated, so the retry is not taken for reuse", async () => {
    const rt1 = await firstRefresh();
    m.failNext = "tokens.insertOpaque.refresh";
    await expect(grant("refresh_token", { refresh_token: rt1 })).rejects.toThrow("injected failure");
    const presented = [...m.state.tokens.values()].find((t) => t.kind === "refresh")!;
    expect(presented.rotatedAt).toBeNull();
    const retry = await grant("refresh_token", { refresh_token: rt1 });
    expect(retry.refresh_token).toBeTruthy();
    expect([...m.state.families.values()][0]!.revokedAt).toBeNull();
  });
});

describe("client_credentials against the repositories", () => {
  it("a JWT access token writes nothing and opens no transaction", async () => {
    const body = await grant("client_credentials", { scope: "openid offline_access" });
    expect(decodeJwt(body.access_token)).toMatchObject({ sub: client.id, client_id: client.id });
    expect(body.refresh_token).toBeUndefined();
    expect(m.writes).toEqual([]);
    expect(m.transactions).toBe(0);
  });

  it("an opaque token is sealed: nothing is written, and only this store's key opens it", async () => {
    const opaque = makeClient({ accessTokenType: "opaque" });
    const writes = m.writes.length;
    const body = await grant("client_credentials", {}, opaque);
    expect(m.writes.length).toBe(writes);
    expect(m.transactions).toBe(0);
    expect(await m.store.tokens.findByValue(body.access_token)).toBeUndefined();
    expect(m.store.keys.sealer.open(body.access_token)).toMatchObject({ c: opaque.id, a: [opaque.id] });
    const other = await MemoryStore.create(m.settings);
    expect(other.store.keys.sealer.open(body.access_token)).toBeUndefined();
  });
});

describe("revocation and token resolution against the repositories", () => {
  const env = () => ({ store: m.store, issuer: ISSUER });

  it("a revoked JWT access token no longer resolves; another client's revocation changes nothing", async () => {
    const body = await grant("client_credentials", {});
    expect((await resolveAccessToken(env(), body.access_token))?.clientId).toBe(client.id);
    const other = makeClient({ id: "other-client" });
    expect(await revokeToken(env(), other, body.access_token)).toEqual({ revoked: false });
    expect(await resolveAccessToken(env(), body.access_token)).toBeDefined();
    expect(await revokeToken(env(), client, body.access_token)).toMatchObject({ revoked: true, kind: "access_token", format: "jwt" });
    expect(await resolveAccessToken(env(), body.access_token)).toBeUndefined();
  });

  it("an opaque access token resolves until its lifetime has passed on the store's clock", async () => {
    client = makeClient({ accessTokenType: "opaque", accessTokenLifetime: 300 });
    m.clients.set(client.id, client);
    const body = await grant("client_credentials", {});
    m.clock.advanceSeconds(299);
    expect(await resolveAccessToken(env(), body.access_token)).toBeDefined();
    m.clock.advanceSeconds(2);
    expect(await resolveAccessToken(env(), body.access_token)).toBeUndefined();
    // Expired: nothing left to revoke.
    expect(await revokeToken(env(), client, body.access_token)).toEqual({ revoked: false });
  });

  it("revoking a refresh token ends its family and the access tokens issued with it", async () => {
    const code = await issueCode();
    const body = await grant("authorization_code", { code, redirect_uri: REDIRECT });
    expect(await revokeToken(env(), client, body.refresh_token!, "refresh_token")).toMatchObject({ revoked: true, kind: "refresh_token" });
    expect(await refused(grant("refresh_token", { refresh_token: body.refresh_token! }))).toBe("invalid_grant");
    expect(await resolveAccessToken(env(), body.access_token)).toBeUndefined();
  });
});
