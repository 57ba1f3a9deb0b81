import { describe, expect, it } from "vitest";
import { compactVerify, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, jwtVerify } from "jose";
import { keyObjectOf, signCompactRs256 } from "@/lib/keys/jws";

describe("RS256 compact JWS signed with node:crypto (lib/keys/jws.ts)", () => {
  it("is a JWT that jose verifies with the public key, header and claims intact", async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256", { modulusLength: 2048, extractable: true });
    const payload = { iss: "https://idp.example", sub: "ü-user", aud: ["api"], exp: Math.floor(Date.now() / 1000) + 60, nested: { a: [1, "b"] } };
    const jwt = await signCompactRs256({ alg: "RS256", kid: "k1", typ: "at+jwt" }, payload, keyObjectOf(privateKey));
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: "RS256", kid: "k1", typ: "at+jwt" });
    const { payload: verified } = await jwtVerify(jwt, publicKey, { issuer: "https://idp.example", audience: "api", typ: "at+jwt" });
    expect(verified).toEqual(payload);
    // The key as a JWK (the way relying parties get it from the key set) verifies it too.
    const jwk = await exportJWK(publicKey);
    await expect(jwtVerify(jwt, await importJWK({ ...jwk, alg: "RS256" }, "RS256"))).resolves.toBeTruthy();
  });

  it("is refused by jose once its payload or signature is changed, or under another key", async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256", { modulusLength: 2048, extractable: true });
    const other = await generateKeyPair("RS256", { modulusLength: 2048 });
    const jwt = await signCompactRs256({ alg: "RS256" }, { sub: "a" }, keyObjectOf(privateKey));
    const [h, , s] = jwt.split(".");
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: "b" })).toString("base64url")}.${s}`;
    await expect(compactVerify(jwt, publicKey)).resolves.toBeTruthy();
    await expect(compactVerify(forged, publicKey)).rejects.toThrow();
    await expect(compactVerify(jwt, other.publicKey)).rejects.toThrow();
    const flipped = `${h}.${jwt.split(".")[1]}.${Buffer.from(Buffer.from(s!, "base64url").map((b, i) => (i === 0 ? b ^ 1 : b))).toString("base64url")}`;
    await expect(compactVerify(flipped, publicKey)).rejects.toThrow();
  });
});
