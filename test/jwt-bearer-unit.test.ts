import { decodeJwt, exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey } from "jose";
import { beforeEach, describe, expect, it } from "vitest";
import { resolveAccessToken } from "@/lib/oauth/access-token";
import type { User } from "@/lib/store/users";
import { ISSUER, makeUser, publishedKeys, refused, runGrant, secretClient, unitSettings } from "./fakes/factories";
import { MemoryStore } from "./fakes/memory-store";

/**
 * The JWT profile grant (RFC 7523 2.1, spec 4.3.2) against the in-memory store: a machine user
 * signs an assertion with one of its registered keys, named by `kid`.
 */

const GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
let m: MemoryStore;
let machine: User;
let privateKey: CryptoKey;

beforeEach(async () => {
  m = await MemoryStore.create(unitSettings());
  machine = makeUser({ id: "machine-1", type: "machine", username: "robot", email: null, givenName: null, familyName: null });
  m.users.set(machine.id, machine);
  const pair = await generateKeyPair("RS256", { extractable: true });
  privateKey = pair.privateKey;
  m.machineKeys.set("mk-1", { id: "mk-1", userId: machine.id, publicJwk: { ...(await exportJWK(pair.publicKey)) }, alg: "RS256", createdAt: new Date(m.clock.now()), expiresAt: null });
});

const nowSeconds = () => Math.floor(m.clock.now() / 1000);

function assertion(o: { kid?: string; iss?: string; sub?: string; aud?: string; iat?: number; exp?: number; jti?: string | null; key?: CryptoKey } = {}): Promise<string> {
  const now = nowSeconds();
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg: "RS256", kid: o.kid ?? "mk-1" })
    .setIssuer(o.iss ?? machine.id)
    .setSubject(o.sub ?? machine.id)
    .setAudience(o.aud ?? ISSUER)
    .setIssuedAt(o.iat ?? now)
    .setExpirationTime(o.exp ?? now + 300);
  if (o.jti !== null) jwt.setJti(o.jti ?? `jti-${Math.random()}`);
  return jwt.sign(o.key ?? privateKey);
}

const bearer = (a: string, extra: Record<string, string> = {}) => runGrant(m, GRANT, { assertion: a, ...extra }, null);

describe("a valid assertion", () => {
  it("without a client: the machine user is its own client; the access token is signed by our key and resolves", async () => {
    const body = await bearer(await assertion(), { scope: "openid" });
    expect(body.token_type).toBe("Bearer");
    expect(body.refresh_token).toBeUndefined();
    const { payload, protectedHeader } = await jwtVerify(body.access_token, publishedKeys(m), { issuer: ISSUER, currentDate: new Date(m.clock.now()) });
    expect(protectedHeader.typ).toBe("at+jwt");
    expect(payload).toMatchObject({ sub: machine.id, client_id: machine.id, scope: "openid" });
    const { payload: id } = await jwtVerify(body.id_token!, publishedKeys(m), { issuer: ISSUER, audience: machine.id, currentDate: new Date(m.clock.now()) });
    expect(id.sub).toBe(machine.id);
    expect(id.amr).toEqual(["pk"]);
    const resolved = await resolveAccessToken({ store: m.store, issuer: ISSUER }, body.access_token);
    expect(resolved?.user?.id).toBe(machine.id);
    expect(m.state.audit.map((a) => [a.event.action, a.event.details?.keyId])).toEqual([["token.issued", "mk-1"]]);
  });

  it("with a registered client: the token is that client's; offline_access never yields a refresh token", async () => {
    const client = secretClient("svc", "svc-secret", { grantTypes: [GRANT] });
    m.clients.set(client.id, client);
    const body = await runGrant(m, GRANT, { assertion: await assertion(), scope: "openid offline_access" }, client);
    expect(decodeJwt(body.access_token)).toMatchObject({ sub: machine.id, client_id: "svc", scope: "openid" });
    expect(body.refresh_token).toBeUndefined();
  });

  it("the token endpoint's URL is accepted as audience too", async () => {
    const body = await bearer(await assertion({ aud: `${ISSUER}/oauth/v2/token` }));
    expect(decodeJwt(body.access_token).sub).toBe(machine.id);
  });
});

describe("assertions refused with invalid_grant, leaving nothing written", () => {
  it("the wrong audience", async () => {
    expect(await refused(bearer(await assertion({ aud: "https://elsewhere.example" })))).toBe("invalid_grant");
    expect(m.state.audit).toEqual([]);
    expect(m.state.jtis.size).toBe(0);
  });

  it("expired: past its exp on the store's clock (beyond the allowed skew)", async () => {
    const a = await assertion({ exp: nowSeconds() + 60 });
    m.clock.advanceSeconds(60 + 31);
    expect(await refused(bearer(a))).toBe("invalid_grant");
  });

  it("valid for more than an hour", async () => {
    const now = nowSeconds();
    expect(await refused(bearer(await assertion({ iat: now, exp: now + 3601 })))).toBe("invalid_grant");
  });

  it("a replayed jti: the first presentation works, the second does not", async () => {
    const a = await assertion({ jti: "once" });
    expect((await bearer(a)).access_token).toBeTruthy();
    expect(await refused(bearer(a))).toBe("invalid_grant");
    // A new assertion with the same jti is the same replay.
    expect(await refused(bearer(await assertion({ jti: "once" })))).toBe("invalid_grant");
    expect(m.state.audit).toHaveLength(1);
  });

  it("a failure after the jti check does not burn the jti: the retry works", async () => {
    const a = await assertion({ jti: "retry" });
    m.failNext = "audit.record";
    await expect(bearer(a)).rejects.toThrow("injected failure");
    expect(m.state.jtis.size).toBe(0);
    expect((await bearer(a)).access_token).toBeTruthy();
  });

  it("without jti the assertion is not replay-checked (RFC 7523 makes jti optional)", async () => {
    const a = await assertion({ jti: null });
    expect((await bearer(a)).access_token).toBeTruthy();
    expect((await bearer(a)).access_token).toBeTruthy();
  });

  it("an unknown key id", async () => {
    expect(await refused(bearer(await assertion({ kid: "mk-unknown" })))).toBe("invalid_grant");
  });

  it("a registered kid, but signed with another private key", async () => {
    const other = await generateKeyPair("RS256");
    expect(await refused(bearer(await assertion({ key: other.privateKey })))).toBe("invalid_grant");
  });

  it("an expired machine key", async () => {
    m.machineKeys.set("mk-1", { ...m.machineKeys.get("mk-1")!, expiresAt: new Date(m.clock.now() + 10_000) });
    expect((await bearer(await assertion())).access_token).toBeTruthy();
    m.clock.advanceSeconds(10);
    expect(await refused(bearer(await assertion()))).toBe("invalid_grant");
  });

  it("the key of one machine user naming another as issuer and subject", async () => {
    const other = makeUser({ id: "machine-2", type: "machine", username: "robot2" });
    m.users.set(other.id, other);
    expect(await refused(bearer(await assertion({ iss: other.id, sub: other.id })))).toBe("invalid_grant");
  });

  it("a locked machine user, or a key that belongs to a human user", async () => {
    m.users.set(machine.id, { ...machine, locked: true });
    expect(await refused(bearer(await assertion()))).toBe("invalid_grant");
    m.users.set(machine.id, { ...machine, type: "human" });
    expect(await refused(bearer(await assertion()))).toBe("invalid_grant");
  });

  it("not a JWT at all", async () => {
    expect(await refused(bearer("not-a-jwt"))).toBe("invalid_grant");
  });
});
