import { createHash, generateKeyPairSync, generatePrimeSync, randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { compactVerify, exportJWK, generateKeyPair, importJWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apis, clients } from "@/db/schema";
import { randomToken } from "@/lib/crypto";
import { insertApi } from "@/lib/store/apis";
import { insertMachineKey } from "@/lib/store/users";
import { startTestInstance, type TestInstance } from "./harness";
import { makeClient, makeCode, makeUser, token } from "./token-support";

// RSA public keys with degenerate parameters (NIST SP 800-89 / FIPS 186-5), seen from the three
// places that take a public key (machine keys, a client's jwks, an API's jwks) and from the
// endpoints that verify with keys stored before the check existed.

const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

let t: TestInstance;
/** A real 2048-bit modulus (e = 65537). */
let n: bigint;
let normal: Record<string, unknown>;
beforeAll(async () => {
  t = await startTestInstance();
  normal = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ format: "jwk" });
  n = toBig(normal.n as string);
});
afterAll(() => t.close());

const toBig = (v: string) => BigInt("0x" + Buffer.from(v, "base64url").toString("hex"));
const b64 = (x: bigint) => {
  const hex = x.toString(16);
  return Buffer.from(hex.length % 2 ? "0" + hex : hex, "hex").toString("base64url");
};
const rsa = (mod: bigint, e: bigint | string = 65537n) => ({ kty: "RSA", n: b64(mod), e: typeof e === "string" ? e : b64(e) });
const oddBits = (bits: number) => toBig(randomBytes(bits / 8).toString("base64url")) | (1n << BigInt(bits - 1)) | 1n;

/** Each degenerate key, with the code its refusal carries. */
function degenerateKeys(): [string, Record<string, unknown>, string][] {
  const p = generatePrimeSync(1040, { bigint: true });
  const moduli = Array.from({ length: 8 }, () => toBig(generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ format: "jwk" }).n!));
  return [
    ["e = 1", rsa(n, "AQ"), "key_rsa_exponent"],
    ["e = 2", rsa(n, 2n), "key_rsa_exponent"],
    ["e = 3", rsa(n, 3n), "key_rsa_exponent"],
    ["e = 2^16 - 1", rsa(n, 65535n), "key_rsa_exponent"],
    ["e even (2^16 + 2)", rsa(n, 65538n), "key_rsa_exponent"],
    ["e = 2^256 + 1", rsa(n, (1n << 256n) + 1n), "key_rsa_exponent"],
    ["e of 2048 bits", rsa(n, oddBits(2048)), "key_rsa_exponent"],
    ["n even", rsa(n + 1n), "key_rsa_modulus"],
    ["n = 2^2048 - 1 (all 0xff octets)", rsa((1n << 2048n) - 1n), "key_rsa_modulus"],
    ["n with the prime factor 997", rsa(n * 997n), "key_rsa_modulus"],
    ["n = p^2", rsa(p * p), "key_rsa_modulus"],
    ["n of 16384 bits", rsa(moduli.reduce((a, b) => a * b, 1n) | (1n << 16383n)), "key_rsa_long"],
    ["n of 8200 bits", rsa(oddBits(8200)), "key_rsa_long"],
    ["n of 1024 bits", rsa(n >> 1024n | 1n), "key_rsa_short"],
    ["n with a leading zero octet", { kty: "RSA", n: Buffer.concat([Buffer.alloc(1), Buffer.from(normal.n as string, "base64url")]).toString("base64url"), e: "AQAB" }, "key_invalid"],
  ];
}

type FieldError = { path: string; code: string; message: string };
async function refusal(res: Response): Promise<FieldError[]> {
  expect(res.status).toBe(400);
  const body = await res.json();
  expect(body.error).toBe("invalid_request");
  return body.fields;
}

const post = (path: string, json: unknown) => t.api("/management/v1" + path, { method: "POST", json });
const patch = (path: string, json: unknown) => t.api("/management/v1" + path, { method: "PATCH", json });

describe("registering RSA public keys", () => {
  it("refuses each degenerate key as a machine key, a client's jwks and an API's jwks, and stores nothing", async () => {
    const machine = await (await post("/users", { type: "machine", username: "rsa-checks" })).json();
    const api = await (await post("/apis", { identifier: "https://api.example/rsa-checks", name: "RSA checks" })).json();
    for (const [i, [name, key, code]] of degenerateKeys().entries()) {
      const asMachineKey = await refusal(await post(`/users/${machine.id}/keys`, { publicKey: key }));
      expect(asMachineKey.map((f) => [f.path, f.code]), name).toEqual([["publicKey", code]]);
      expect(asMachineKey[0]!.message, name).toMatch(/^The key /);

      const clientName = `rsa-degenerate-${i}`;
      const asClient = await refusal(await post("/clients", { name: clientName, redirectUris: ["https://app.example/cb"], authMethod: "private_key_jwt", jwks: { keys: [key] } }));
      expect(asClient.map((f) => [f.path, f.code]), name).toEqual([["jwks.keys.0", code]]);
      expect(asClient[0]!.message, name).toMatch(/^Key /);
      expect(await t.inst.db.select().from(clients).where(eq(clients.name, clientName)), name).toEqual([]);

      const identifier = `https://api.example/rsa-degenerate-${i}`;
      const asNewApi = await refusal(await post("/apis", { identifier, name: "x", jwks: { keys: [key] } }));
      expect(asNewApi.map((f) => [f.path, f.code]), name).toEqual([["jwks.keys.0", code]]);
      expect(await t.inst.db.select().from(apis).where(eq(apis.identifier, identifier)), name).toEqual([]);
      const asApiPatch = await refusal(await patch(`/apis/${api.apiId}`, { jwks: { keys: [key] } }));
      expect(asApiPatch.map((f) => [f.path, f.code]), name).toEqual([["jwks.keys.0", code]]);
    }
    expect((await (await t.api(`/management/v1/users/${machine.id}/keys`)).json()).keys).toEqual([]);
    expect((await (await t.api(`/management/v1/apis/${api.apiId}`)).json()).jwks).toBeNull();
  }, 60_000);

  it("says why in the refusal's message", async () => {
    const machine = await (await post("/users", { type: "machine", username: "rsa-messages" })).json();
    const message = async (key: unknown) => (await refusal(await post(`/users/${machine.id}/keys`, { publicKey: key })))[0]!.message;
    expect(await message(rsa(n, "AQ"))).toBe("The key has an invalid RSA public exponent: it must be odd and between 2^16 and 2^256.");
    expect(await message(rsa((1n << 2048n) - 1n))).toMatch(/^The key has an RSA modulus that is not a valid modulus/);
    expect(await message(rsa(oddBits(8200)))).toBe("The key is too long: RSA keys longer than 8192 bits are not accepted.");
  });

  it("accepts sound keys: 2048 bits with e = 65537, an odd e just below 2^256, a modulus of up to 8192 bits", async () => {
    const machine = await (await post("/users", { type: "machine", username: "rsa-sound" })).json();
    const generated = await generateKeyPair("RS256", { extractable: true });
    const big = Array.from({ length: 4 }, () => toBig(generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ format: "jwk" }).n!)).reduce((a, b) => a * b, 1n);
    expect(big.toString(2).length).toBeLessThanOrEqual(8192);
    for (const key of [await exportJWK(generated.publicKey), normal, rsa(n, (1n << 256n) - 1n), rsa(n, (1n << 16n) + 1n), rsa(big)]) {
      const res = await post(`/users/${machine.id}/keys`, { publicKey: key });
      expect(res.status).toBe(201);
    }
    const client = await post("/clients", { name: "rsa-sound", redirectUris: ["https://app.example/cb"], authMethod: "private_key_jwt", jwks: { keys: [normal] } });
    expect(client.status).toBe(201);
    const api = await post("/apis", { identifier: "https://api.example/rsa-sound", name: "sound", jwks: { keys: [normal] } });
    expect(api.status).toBe(201);
  });
});

// ---- keys stored before the check: a forged signature under e = 1 ----

const DIGEST_INFO_SHA256 = Buffer.from("3031300d060960864801650304020105000420", "hex");

/**
 * A JWS "signed" for an RSA key with e = 1 without any private key: with e = 1, s^e mod n = s, so
 * the EMSA-PKCS1-v1_5 encoding of the digest is itself a valid RS256 signature.
 */
function forge(header: Record<string, unknown>, payload: Record<string, unknown>): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const input = `${part({ alg: "RS256", ...header })}.${part(payload)}`;
  const digest = Buffer.concat([DIGEST_INFO_SHA256, createHash("sha256").update(input).digest()]);
  const em = Buffer.concat([Buffer.from([0, 1]), Buffer.alloc(256 - 3 - digest.length, 0xff), Buffer.from([0]), digest]);
  return `${input}.${em.toString("base64url")}`;
}

const claims = (id: string, aud: string) => {
  const now = Math.floor(Date.now() / 1000);
  return { iss: id, sub: id, aud, iat: now, exp: now + 120, jti: randomToken(12) };
};

describe("keys stored before the check", () => {
  it("the forgery is real: jose verifies it with the e = 1 key itself", async () => {
    const forged = forge({ kid: "x" }, claims("x", "y"));
    await expect(compactVerify(forged, await importJWK(rsa(n, "AQ"), "RS256"))).resolves.toBeTruthy();
  });

  it("jwt-bearer: an assertion forged for a stored e = 1 machine key is invalid_grant, not a token", async () => {
    const machine = await makeUser(t, { type: "machine", name: "e1", email: null, givenName: null, familyName: null });
    const key = await insertMachineKey(t.inst.db, machine.id, rsa(n, "AQ"), "RS256");
    const r = await token(t, { grant_type: JWT_BEARER, assertion: forge({ kid: key.id }, claims(machine.id, t.issuer)) });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_grant");
    expect(r.body.error_description).toBe("The assertion's key cannot be used.");
    expect(r.body.access_token).toBeUndefined();
  });

  it("jwt-bearer: a sound stored key still works, also with the leading zero octet some libraries write", async () => {
    const machine = await makeUser(t, { type: "machine", name: "lz", email: null, givenName: null, familyName: null });
    const pair = await generateKeyPair("RS256", { extractable: true });
    const pub = await exportJWK(pair.publicKey);
    const padded = { ...pub, n: Buffer.concat([Buffer.alloc(1), Buffer.from(pub.n!, "base64url")]).toString("base64url") };
    for (const jwk of [pub, padded]) {
      const key = await insertMachineKey(t.inst.db, machine.id, jwk, "RS256");
      const c = claims(machine.id, t.issuer);
      const assertion = await new SignJWT({ jti: c.jti }).setProtectedHeader({ alg: "RS256", kid: key.id }).setIssuer(c.iss).setSubject(c.sub).setAudience(c.aud).setIssuedAt().setExpirationTime("2m").sign(pair.privateKey);
      const r = await token(t, { grant_type: JWT_BEARER, assertion });
      expect(r.status).toBe(200);
      expect(r.body.access_token).toBeTruthy();
    }
  });

  it("private_key_jwt: a client assertion forged for a stored e = 1 key is invalid_client; the client's sound key keeps working", async () => {
    const good = await generateKeyPair("RS256", { extractable: true });
    const { client } = await makeClient(t, {
      authMethod: "private_key_jwt",
      jwks: { keys: [{ ...rsa(n, "AQ"), kid: "bad", alg: "RS256", use: "sig" }, { ...(await exportJWK(good.publicKey)), kid: "good", alg: "RS256", use: "sig" }] },
    });
    // An authorization code redeemed with the assertion as client authentication.
    const user = await makeUser(t);
    const cc = async (clientId: string, assertion: string) => {
      const { code } = await makeCode(t, { client: { id: clientId } as never, user });
      return token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb", client_assertion_type: ASSERTION_TYPE, client_assertion: assertion });
    };
    const forged = await cc(client.id, forge({ kid: "bad" }, claims(client.id, t.issuer)));
    expect(forged.status).toBe(401);
    expect(forged.body.error).toBe("invalid_client");
    expect(forged.body.error_description).toBe("The client assertion is invalid: no matching registered key.");
    expect(forged.body.access_token).toBeUndefined();

    const c = claims(client.id, t.issuer);
    const real = await new SignJWT({ jti: c.jti }).setProtectedHeader({ alg: "RS256", kid: "good" }).setIssuer(c.iss).setSubject(c.sub).setAudience(c.aud).setIssuedAt().setExpirationTime("2m").sign(good.privateKey);
    const ok = await cc(client.id, real);
    expect(ok.status).toBe(200);
    expect(ok.body.access_token).toBeTruthy();

    const { client: onlyBad } = await makeClient(t, { authMethod: "private_key_jwt", jwks: { keys: [{ ...rsa(n, "AQ"), kid: "bad" }] } });
    const alone = await cc(onlyBad.id, forge({ kid: "bad" }, claims(onlyBad.id, t.issuer)));
    expect(alone.status).toBe(401);
    expect(alone.body.error).toBe("invalid_client");
    expect(alone.body.error_description).toBe("The client has no registered keys.");
  });

  it("introspection: an API's assertion forged for a stored e = 1 key is invalid_client", async () => {
    const identifier = "https://api.example/rsa-e1";
    await insertApi(t.inst.db, { identifier, name: "e1", accessTokenLifetime: 300, jwks: { keys: [{ ...rsa(n, "AQ"), kid: "api-e1" }] } });
    t.inst.caches.apis.invalidate();
    const res = await fetch(t.baseUrl + "/oauth/v2/introspect", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        token: "anything",
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: forge({ kid: "api-e1" }, claims(identifier, t.issuer + "/oauth/v2/introspect")),
      }).toString(),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: "invalid_client", error_description: "The client has no registered keys." });
  });
});
