import { sign as cryptoSign, KeyObject } from "node:crypto";

/**
 * JWS Compact Serialization (RFC 7515 §7.1) of a JSON payload, signed RS256 (RSASSA-PKCS1-v1_5
 * with SHA-256, RFC 7518 §3.3) by Node's own crypto.
 *
 * Why not jose's SignJWT, which DESIGN.md names for JOSE: signing is the one JOSE operation on
 * the token endpoint's hot path, and jose signs through WebCrypto, whose per-call overhead
 * (key import checks, promise wrapping of the subtle API) measured about a quarter of a
 * client-credentials request's CPU in `npm run bench`. `crypto.sign` with a callback runs the
 * same RSA operation on libuv's thread pool. Everything else (verification, key generation, JWK
 * import and export) stays with jose, and test/jws.test.ts checks these tokens with jose.
 */
export function signCompactRs256(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject): Promise<string> {
  const input = `${b64(JSON.stringify(header))}.${b64(JSON.stringify(payload))}`;
  return new Promise((resolve, reject) => {
    cryptoSign("sha256", Buffer.from(input), key, (err, signature) => {
      if (err) reject(err);
      else resolve(`${input}.${signature.toString("base64url")}`);
    });
  });
}

const b64 = (s: string) => Buffer.from(s).toString("base64url");

/** The algorithms signCompactRs256 produces; a key of another algorithm goes through jose. */
export const NODE_SIGNED_ALGS: ReadonlySet<string> = new Set(["RS256"]);

export function keyObjectOf(key: CryptoKey): KeyObject {
  return KeyObject.from(key);
}
