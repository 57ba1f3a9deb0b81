import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomToken } from "@/lib/crypto";
import { insertMachineKey } from "@/lib/store/users";
import { startTestInstance, type TestInstance } from "./harness";
import { basic, expectNoStore, makeClient, makeUser, token, verify } from "./token-support";

const GT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
let t: TestInstance;
let keys: Awaited<ReturnType<typeof generateKeyPair>>;
let machine: { id: string };
let kid: string;
beforeAll(async () => {
  t = await startTestInstance();
  keys = await generateKeyPair("RS256", { extractable: true });
  machine = await makeUser(t, { type: "machine", name: "robot", email: null, givenName: null, familyName: null });
  kid = (await insertMachineKey(t.inst.db, machine.id, await exportJWK(keys.publicKey), "RS256")).id;
});
afterAll(() => t.close());

/** An assertion with any header, signed by nothing: what a sender can write before any check. */
function unsignedWithHeader(header: Record<string, unknown>): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${part(header)}.${part({ iss: "1", sub: "1", aud: "x", exp: 9_999_999_999 })}.AAAA`;
}

async function assertion(o: { sub?: string; iss?: string; aud?: string | unknown[]; exp?: number | null; iat?: number | null; jti?: string | null; kid?: string; alg?: string; key?: CryptoKey | Uint8Array } = {}) {
  const now = Math.floor(Date.now() / 1000);
  // `aud` in the payload, not through setAudience (which refuses a list holding other than strings).
  const payload: Record<string, unknown> = { aud: o.aud ?? t.issuer };
  if (o.jti !== null) payload.jti = o.jti ?? randomToken(12);
  const jwt = new SignJWT(payload)
    .setProtectedHeader({ alg: o.alg ?? "RS256", kid: o.kid ?? kid })
    .setIssuer(o.iss ?? machine.id)
    .setSubject(o.sub ?? machine.id);
  if (o.exp !== null) jwt.setExpirationTime(o.exp ?? now + 300);
  if (o.iat !== null) jwt.setIssuedAt(o.iat ?? now);
  return jwt.sign(o.key ?? keys.privateKey);
}

describe("jwt-bearer grant (RFC 7523)", () => {
  it("issues access tokens that userinfo accepts, with or without a client, until the machine user is locked", async () => {
    const userinfo = (at: string) => fetch(t.baseUrl + "/oidc/v1/userinfo", { headers: { authorization: `Bearer ${at}` } });
    const { client, secret } = await makeClient(t);
    const own = await token(t, { grant_type: GT, assertion: await assertion(), scope: "openid profile" });
    const viaClient = await token(t, { grant_type: GT, assertion: await assertion(), scope: "openid profile" }, { auth: basic(client.id, secret!) });
    for (const r of [own, viaClient]) {
      expect(r.status).toBe(200);
      const res = await userinfo(r.body.access_token);
      expect(res.status).toBe(200);
      expect((await res.json()).sub).toBe(machine.id);
    }
    // Locked by an administrator, as users do it: the tokens stop working at once, although
    // userinfo has just seen them active (its short-lived token memory is dropped by the change).
    const lock = (locked: boolean) => t.api(`/management/v1/users/${machine.id}`, { method: "PATCH", json: { locked } });
    expect((await lock(true)).status).toBe(200);
    try {
      expect((await userinfo(own.body.access_token)).status).toBe(401);
    } finally {
      expect((await lock(false)).status).toBe(200);
    }
  });

  it("issues an access token for the machine user, and an ID token only when openid is requested", async () => {
    const r = await token(t, { grant_type: GT, assertion: await assertion(), scope: "openid profile" });
    expect(r.status).toBe(200);
    expectNoStore(r.res);
    expect(r.body).toMatchObject({ token_type: "Bearer", scope: "openid profile" });
    expect(r.body.expires_in).toBeGreaterThan(0);
    expect((await verify(t, r.body.access_token)).payload).toMatchObject({ sub: machine.id, iss: t.issuer, scope: "openid profile" });
    const id = (await verify(t, r.body.id_token)).payload;
    expect(id.sub).toBe(machine.id);
    expect(id.azp).toBeTruthy();

    const noOpenid = await token(t, { grant_type: GT, assertion: await assertion({ aud: t.issuer + "/oauth/v2/token" }), scope: "profile" });
    expect(noOpenid.status).toBe(200);
    expect(noOpenid.body.id_token).toBeUndefined();
  });

  it("uses an authenticating client when one is sent, and checks its registration", async () => {
    const { client, secret } = await makeClient(t);
    const r = await token(t, { grant_type: GT, assertion: await assertion(), scope: "openid" }, { auth: basic(client.id, secret!) });
    expect(r.status).toBe(200);
    expect((await verify(t, r.body.access_token)).payload.client_id).toBe(client.id);
    expect((await verify(t, r.body.id_token)).payload.aud).toBe(client.id);
    const limited = await makeClient(t, { grantTypes: ["client_credentials"] });
    const u = await token(t, { grant_type: GT, assertion: await assertion() }, { auth: basic(limited.client.id, limited.secret!) });
    expect(u.body.error).toBe("unauthorized_client");
    const wrong = await token(t, { grant_type: GT, assertion: await assertion() }, { auth: basic(client.id, "nope") });
    expect(wrong.status).toBe(401);
  });

  it("accepts a jti once", async () => {
    const a = await assertion();
    expect((await token(t, { grant_type: GT, assertion: a })).status).toBe(200);
    const again = await token(t, { grant_type: GT, assertion: a });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe("invalid_grant");
  });

  it("accepts an assertion without jti, and without iat (RFC 7523 3: both optional)", async () => {
    const now = Math.floor(Date.now() / 1000);
    const noJti = await assertion({ jti: null });
    // Without a jti there is nothing to recognise a replay by: it is valid until its exp.
    for (let i = 0; i < 2; i++) expect((await token(t, { grant_type: GT, assertion: noJti })).status).toBe(200);
    expect((await token(t, { grant_type: GT, assertion: await assertion({ iat: null, exp: now + 3500 }) })).status).toBe(200);
    expect((await token(t, { grant_type: GT, assertion: await assertion({ exp: now + 3600 }) })).status).toBe(200);
  });

  it("refuses bad assertions with invalid_grant", async () => {
    const now = Math.floor(Date.now() / 1000);
    const other = await generateKeyPair("RS256");
    const human = await makeUser(t);
    const cases: [string, string][] = [
      ["exp more than an hour ahead", await assertion({ exp: now + 3700 })],
      ["valid for more than an hour (exp - iat)", await assertion({ iat: now - 1800, exp: now + 1900 })],
      ["no iat, exp more than an hour ahead", await assertion({ iat: null, exp: now + 3700 })],
      ["issued in the future", await assertion({ iat: now + 300, exp: now + 600 })],
      ["expired", await assertion({ exp: now - 100 })],
      ["no exp", await assertion({ exp: null })],
      ["empty jti", await assertion({ jti: "" })],
      ["wrong audience", await assertion({ aud: "https://other.example" })],
      ["audience list with a number (RFC 7519 4.1.3)", await assertion({ aud: [t.issuer, 5] })],
      ["audience list with an object", await assertion({ aud: [t.issuer, {}] })],
      ["sub is another user", await assertion({ sub: human.id })],
      ["iss is another user", await assertion({ iss: human.id })],
      ["unknown kid", await assertion({ kid: "000" })],
      ["foreign key", await assertion({ key: other.privateKey })],
      ["HS256", await assertion({ alg: "HS256", key: new TextEncoder().encode("s".repeat(32)) })],
      ["not a JWT", "abc"],
      // Header members that are not strings (found by a probe: a number was a 500).
      ...[5, {}, true, ["k"], null].map((k): [string, string] => [`kid ${JSON.stringify(k)}`, unsignedWithHeader({ alg: "RS256", kid: k })]),
      ...[5, ["RS256"], null].map((a): [string, string] => [`alg ${JSON.stringify(a)}`, unsignedWithHeader({ alg: a, kid })]),
    ];
    for (const [why, a] of cases) {
      const r = await token(t, { grant_type: GT, assertion: a });
      expect(r.status, why).toBe(400);
      expect(r.body.error, why).toBe("invalid_grant");
    }
    expect((await token(t, { grant_type: GT })).body.error).toBe("invalid_request");
  });
});
