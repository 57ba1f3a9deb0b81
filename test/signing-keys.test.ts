import { eq } from "drizzle-orm";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditEvents, signingKeys } from "@/db/schema";
import { decrypt } from "@/lib/crypto";
import {
  activeSigningKey,
  listSigningKeys,
  removeExpiredKeys,
  rotateSigningKey,
} from "@/lib/keys/signing-keys";
import { startTestInstance, type TestInstance } from "./harness";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

async function jwks() {
  const res = await fetch(t.baseUrl + "/oauth/v2/keys");
  expect(res.status).toBe(200);
  return (await res.json()) as { keys: Record<string, unknown>[] };
}

async function sign(): Promise<string> {
  const key = await activeSigningKey(t.inst);
  return new SignJWT({ sub: "x" }).setProtectedHeader({ alg: key.alg, kid: key.kid }).setIssuer(t.issuer).setExpirationTime("5m").sign(key.privateKey);
}

describe("signing keys", () => {
  it("stores private keys only encrypted (AES-256-GCM under the master key)", async () => {
    const [row] = await t.inst.db.select().from(signingKeys);
    expect(row!.privateJwkEncrypted).not.toMatch(/"d"|"p"|"q"/);
    expect(row!.privateJwkEncrypted.split(".")).toHaveLength(3);
    const plain = JSON.parse(decrypt(t.inst.masterKey, row!.privateJwkEncrypted, `signing-key:${row!.kid}`));
    expect(plain.kty).toBe("RSA");
    expect(plain.d).toBeTruthy();
    expect(() => decrypt(Buffer.alloc(32, 1), row!.privateJwkEncrypted, `signing-key:${row!.kid}`)).toThrow();
    // Bound to its row: the same ciphertext does not decrypt as another kid's key.
    expect(() => decrypt(t.inst.masterKey, row!.privateJwkEncrypted, "signing-key:other")).toThrow();
  });

  it("publishes RS256 2048-bit public keys with kid, kty, alg and use, and nothing private", async () => {
    const { keys } = await jwks();
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) {
      expect(k).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig" });
      expect(typeof k.kid).toBe("string");
      expect(Buffer.from(String(k.n), "base64url").length).toBe(256);
      for (const p of ["d", "p", "q", "dp", "dq", "qi"]) expect(k).not.toHaveProperty(p);
    }
  });

  it("does not rotate before the interval has passed", async () => {
    const before = await listSigningKeys(t.inst.db, new Date());
    const r = await rotateSigningKey(t.inst, { force: false, intervalSeconds: 86_400 });
    expect(r.rotated).toBe(false);
    expect(await listSigningKeys(t.inst.db, new Date())).toEqual(before);
  });

  it("rotates on schedule: the new key signs, the old one stays published until its tokens expire, then leaves", async () => {
    const oldToken = await sign();
    const oldKid = decodeProtectedHeader(oldToken).kid;
    const later = new Date(Date.now() + 86_401_000);
    const r = await rotateSigningKey(t.inst, { force: false, intervalSeconds: 86_400, now: later });
    expect(r.rotated).toBe(true);
    expect(r.kid).not.toBe(oldKid);

    const newToken = await sign();
    expect(decodeProtectedHeader(newToken).kid).toBe(r.kid);
    const set = createLocalJWKSet(await jwks());
    await jwtVerify(oldToken, set, { issuer: t.issuer });
    await jwtVerify(newToken, set, { issuer: t.issuer });

    const keys = await listSigningKeys(t.inst.db, new Date());
    const old = keys.find((k) => k.kid === oldKid)!;
    expect(old.status).toBe("retired");
    // Retired keys stay at least as long as the longest token lifetime (1 h by default).
    expect(old.removeAfter!.getTime() - later.getTime()).toBeGreaterThanOrEqual(3600_000);

    expect(await removeExpiredKeys(t.inst, new Date(old.removeAfter!.getTime() - 1000))).toEqual([]);
    expect(await removeExpiredKeys(t.inst, new Date(old.removeAfter!.getTime() + 1000))).toEqual([oldKid]);
    t.inst.caches.invalidate("keys");
    const kids = (await jwks()).keys.map((k) => k.kid);
    expect(kids).not.toContain(oldKid);
    expect(kids).toContain(r.kid);
  });

  it("rotates on demand and records who did it", async () => {
    const before = (await activeSigningKey(t.inst)).kid;
    const r = await rotateSigningKey(t.inst, {
      force: true,
      intervalSeconds: 86_400,
      actor: { type: "user", id: "tester" },
    });
    expect(r.rotated).toBe(true);
    expect((await activeSigningKey(t.inst)).kid).toBe(r.kid);
    expect(r.kid).not.toBe(before);
    const events = await t.inst.db.select().from(auditEvents).where(eq(auditEvents.targetId, r.kid));
    expect(events[0]).toMatchObject({ action: "signing_key.rotated", actorType: "user", actorId: "tester" });
  });

  it("rotates once when several instances find it due at the same moment", async () => {
    const before = new Set((await listSigningKeys(t.inst.db, new Date())).map((k) => k.kid));
    const later = new Date(Date.now() + 3 * 86_400_000);
    const results = await Promise.all(
      [1, 2, 3].map(() => rotateSigningKey(t.inst, { force: false, intervalSeconds: 86_400, now: later })),
    );
    expect(results.filter((r) => r.rotated)).toHaveLength(1);
    const keys = await listSigningKeys(t.inst.db, new Date());
    expect(keys.filter((k) => k.status === "active")).toHaveLength(1);
    expect(keys.filter((k) => !before.has(k.kid))).toHaveLength(1);
  });
});

describe("publishing a new key before it signs", () => {
  // A fresh instance: the tests above rotate at made-up future times, which no real clock does.
  let t: TestInstance;
  beforeAll(async () => {
    t = await startTestInstance();
  });
  afterAll(() => t.close());
  const jwks = async () => (await (await fetch(t.baseUrl + "/oauth/v2/keys")).json()) as { keys: { kid: string }[] };
  const sign = async () => {
    const key = await activeSigningKey(t.inst);
    return new SignJWT({ sub: "x" }).setProtectedHeader({ alg: key.alg, kid: key.kid }).setIssuer(t.issuer).setExpirationTime("5m").sign(key.privateKey);
  };

  it("signs with the new key once a rotation's publish delay has passed", async () => {
    const r = await rotateSigningKey(t.inst, { force: true, intervalSeconds: 86_400, publishDelaySeconds: 300, now: new Date(Date.now() - 301_000) });
    expect((await activeSigningKey(t.inst)).kid).toBe(r.kid);
    expect(decodeProtectedHeader(await sign()).kid).toBe(r.kid);
  });

  it("publishes the new key at once and signs with it only after the key set's max-age", async () => {
    const before = (await activeSigningKey(t.inst)).kid;
    const r = await rotateSigningKey(t.inst, { force: true, intervalSeconds: 86_400, publishDelaySeconds: 300 });
    // A relying party refreshing its cached key set now finds the new key...
    expect((await jwks()).keys.map((k) => k.kid)).toContain(r.kid);
    // ...while tokens are still signed by the key it already knows.
    expect((await activeSigningKey(t.inst)).kid).toBe(before);
    const listed = await listSigningKeys(t.inst.db, new Date());
    expect(listed.find((k) => k.kid === before)!.status).toBe("active");
    expect(listed.find((k) => k.kid === r.kid)!.status).toBe("next");
    // Once the max-age has passed, the new key signs.
    const later = new Date(Date.now() + 301_000);
    expect((await listSigningKeys(t.inst.db, later)).find((k) => k.kid === r.kid)!.status).toBe("active");
  });
});
