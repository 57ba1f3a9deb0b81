import { createCipheriv, createDecipheriv, createHmac, hkdfSync } from "node:crypto";
import { randomBytesFromPool } from "@/lib/crypto";
import type { TokenSealer } from "@/lib/store/repositories";

/**
 * Seals and opens self-contained opaque tokens: a JSON payload encrypted and authenticated with a
 * key derived from the instance master key, so the token says nothing to whoever holds it and only
 * an instance sharing that master key can read or forge one. Opaque access tokens are sealed
 * instead of stored (lib/oauth/tokens.ts): issuing one writes nothing, and revoking one records its
 * `jti`, as for a JWT.
 *
 * The layout, base64url without padding: version (1 byte) ‖ nonce (24) ‖ ciphertext ‖ GCM tag (16).
 * Each token is encrypted under its own key, HMAC-SHA256(K, nonce), with a zero IV: AES-GCM with
 * random 96-bit IVs under one key is only safe for about 2^32 messages, which a busy provider
 * issues in days, while a 192-bit nonce never repeats. The issuer is authenticated with the
 * ciphertext (AAD), so a token sealed for another issuer on the same master key does not open here.
 */

const VERSION = 1;
const NONCE = 24;
const TAG = 16;
const ZERO_IV = Buffer.alloc(12);
/** Far above any payload we seal; refuses to decode megabytes sent as a token. */
const MAX_LENGTH = 4096;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function tokenSealer(masterKey: Buffer, issuer: string, purpose = "opaque-access-token"): TokenSealer {
  const key = Buffer.from(hkdfSync("sha256", masterKey, Buffer.alloc(0), `torii/${purpose}/v${VERSION}`, 32));
  const aad = Buffer.concat([Buffer.from([VERSION]), Buffer.from(issuer, "utf8")]);
  const keyFor = (nonce: Buffer) => createHmac("sha256", key).update(nonce).digest();
  return {
    seal(payload) {
      const nonce = randomBytesFromPool(NONCE);
      const cipher = createCipheriv("aes-256-gcm", keyFor(nonce), ZERO_IV);
      cipher.setAAD(aad);
      const body = cipher.update(JSON.stringify(payload), "utf8");
      const last = cipher.final();
      return Buffer.concat([Buffer.from([VERSION]), nonce, body, last, cipher.getAuthTag()]).toString("base64url");
    },
    open(token) {
      if (token.length > MAX_LENGTH || !BASE64URL.test(token)) return undefined;
      const bytes = Buffer.from(token, "base64url");
      // base64url decoding ignores stray trailing bits: only the one spelling of a token is that token.
      if (bytes.length < 1 + NONCE + TAG + 2 || bytes[0] !== VERSION || bytes.toString("base64url") !== token) return undefined;
      const nonce = bytes.subarray(1, 1 + NONCE);
      const decipher = createDecipheriv("aes-256-gcm", keyFor(nonce), ZERO_IV);
      decipher.setAAD(aad);
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG));
      try {
        const json = Buffer.concat([decipher.update(bytes.subarray(1 + NONCE, bytes.length - TAG)), decipher.final()]).toString("utf8");
        const payload: unknown = JSON.parse(json);
        return payload && typeof payload === "object" && !Array.isArray(payload) ? (payload as Record<string, unknown>) : undefined;
      } catch {
        // final() throws when the tag does not verify: not ours, or altered.
        return undefined;
      }
    },
  };
}
