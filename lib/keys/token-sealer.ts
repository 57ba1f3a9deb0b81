import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";
import type { TokenSealer } from "@/lib/store/repositories";

/**
 * Seals and opens self-contained opaque tokens: a JSON payload encrypted and authenticated with a
 * key derived from the instance master key, so the token says nothing to whoever holds it and only
 * an instance sharing that master key can read or forge one. Opaque access tokens are sealed
 * instead of stored (lib/oauth/tokens.ts): issuing one writes nothing, and revoking one records its
 * `jti`, as for a JWT.
 *
 * The layout, base64url without padding: version (1 byte) ‖ key salt (16) ‖ counter (8) ‖
 * ciphertext ‖ GCM tag (16). AES-GCM must never see the same key and IV twice, and random 96-bit
 * IVs under one key are only safe for about 2^32 messages, which a busy provider issues in days.
 * So each process seals under a key of its own, HMAC-SHA256(K, salt) for a random 128-bit salt, and
 * counts its IVs; a new salt (a new key) every 2^32 tokens. Opening derives the key from the
 * token's salt and remembers the last few. No random bytes and no key derivation per token: the
 * sealing stays a small part of issuing one. The issuer is authenticated with the ciphertext (AAD),
 * so a token sealed for another issuer on the same master key does not open here.
 */

const VERSION = 1;
const SALT = 16;
const COUNTER = 8;
const TAG = 16;
const HEADER = 1 + SALT + COUNTER;
/** Keys sealed under per process, remembered for opening: a few processes share a master key. */
const REMEMBERED_KEYS = 64;
/** Far above any payload we seal; refuses to decode megabytes sent as a token. */
const MAX_LENGTH = 4096;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function tokenSealer(masterKey: Buffer, issuer: string, purpose = "opaque-access-token"): TokenSealer {
  const root = Buffer.from(hkdfSync("sha256", masterKey, Buffer.alloc(0), `torii/${purpose}/v${VERSION}`, 32));
  const aad = Buffer.concat([Buffer.from([VERSION]), Buffer.from(issuer, "utf8")]);
  const keyFor = (salt: Buffer) => createHmac("sha256", root).update(salt).digest();
  const keys = new Map<string, Buffer>();
  const openingKey = (salt: Buffer) => {
    const id = salt.toString("latin1");
    let key = keys.get(id);
    if (!key) {
      // Forged salts cost one HMAC each and are forgotten with the rest once the map is full.
      if (keys.size >= REMEMBERED_KEYS) keys.clear();
      key = keyFor(salt);
      keys.set(id, key);
    }
    return key;
  };

  let salt = Buffer.alloc(0);
  let key = Buffer.alloc(0);
  let counter = 2 ** 32;
  /** GCM's 96-bit IV: zeros, then the counter, which is all the token carries of it. */
  const IV_PAD = Buffer.alloc(12 - COUNTER);

  return {
    seal(payload) {
      // Once per process (and per 2^32 tokens): not on the issuing path.
      if (counter >= 2 ** 32) {
        salt = randomBytes(SALT);
        key = keyFor(salt);
        counter = 0;
      }
      const iv = Buffer.alloc(12);
      iv.writeUInt32BE(counter++, 8);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(aad);
      const body = cipher.update(JSON.stringify(payload), "utf8");
      const last = cipher.final();
      return Buffer.concat([Buffer.from([VERSION]), salt, iv.subarray(12 - COUNTER), body, last, cipher.getAuthTag()]).toString("base64url");
    },
    open(token) {
      if (token.length > MAX_LENGTH || !BASE64URL.test(token)) return undefined;
      const bytes = Buffer.from(token, "base64url");
      // base64url decoding ignores stray trailing bits: only the one spelling of a token is that token.
      if (bytes.length < HEADER + TAG + 2 || bytes[0] !== VERSION || bytes.toString("base64url") !== token) return undefined;
      const iv = Buffer.concat([IV_PAD, bytes.subarray(1 + SALT, HEADER)]);
      const decipher = createDecipheriv("aes-256-gcm", openingKey(bytes.subarray(1, 1 + SALT)), iv);
      decipher.setAAD(aad);
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG));
      try {
        const json = Buffer.concat([decipher.update(bytes.subarray(HEADER, bytes.length - TAG)), decipher.final()]).toString("utf8");
        const payload: unknown = JSON.parse(json);
        return payload && typeof payload === "object" && !Array.isArray(payload) ? (payload as Record<string, unknown>) : undefined;
      } catch {
        // final() throws when the tag does not verify: not ours, or altered.
        return undefined;
      }
    },
  };
}
