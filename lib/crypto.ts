import * as nodeCrypto from "node:crypto";
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** `bytes` of CSPRNG output, base64url: 32 bytes = 256 bits for every secret, token and code. */
export function randomToken(bytes = 32): string {
  const at = take(bytes);
  return pool.toString("base64url", at, at + bytes);
}

/**
 * Random bytes drawn from the CSPRNG 4 KB at a time and handed out once each, in order: a call
 * into OpenSSL per token costs more than the rest of an opaque token's issuance in JavaScript. No
 * byte is handed out twice, and the pool never leaves this module.
 */
let pool = Buffer.alloc(0);
let used = 0;

/** Reserves `n` fresh bytes of the pool and returns where they start. */
function take(n: number): number {
  if (used + n > pool.length) {
    pool = randomBytes(Math.max(4096, n));
    used = 0;
  }
  const at = used;
  used += n;
  return at;
}

/** Numeric identifiers (users, clients) that are safe in URLs and login names and unguessable enough to not leak counts. */
export function randomId(): string {
  const at = take(8);
  const b = pool.readBigUInt64BE(at);
  return (b % 10n ** 18n).toString().padStart(18, "0");
}

/**
 * Hash for high-entropy secrets (client secrets, tokens, codes, PATs). A password hash would be
 * wasted on 256 random bits and would make the token endpoint slow.
 */
export function sha256(value: string): string {
  return sha256Digest(value).toString("base64url");
}

/** Node's one-shot digest (`crypto.hash`), where this Node has it. */
type OneShotHash = (algorithm: "sha256", data: string | Buffer, outputEncoding: "buffer") => Buffer;
const oneShotHash = (nodeCrypto as { hash?: OneShotHash }).hash;

/**
 * The SHA-256 of a value (a string as UTF-8). Every request hashes a few (its client secret, the
 * token it presents, a new refresh token, `at_hash`), and `crypto.hash` does it in about a third
 * of the time of `createHash().update().digest()`, which builds a Hash object each time. It came
 * with Node 20.12; the earlier 20.x that `engines` admits build the object.
 */
export function sha256Digest(value: string | Buffer): Buffer {
  return oneShotHash ? oneShotHash("sha256", value, "buffer") : createHash("sha256").update(value).digest();
}

export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  // Compare equal-length digests so that the length of the secret does not leak either.
  return timingSafeEqual(sha256Digest(ab), sha256Digest(bb)) && ab.length === bb.length;
}

/**
 * Whether `hash` (a `sha256` result) is the SHA-256 of `value`, in constant time. Both sides are
 * digests of one fixed length, so they are compared as they are: `constantTimeEqual` would hash
 * each of them again (a tenth of a client credentials request's CPU went to those hashes).
 */
export function matchesSha256(value: string, hash: string): boolean {
  const computed = sha256Digest(value);
  const stored = Buffer.from(hash, "base64url");
  return stored.length === computed.length && timingSafeEqual(computed, stored);
}

export function hmac(key: Buffer, value: string): string {
  return createHmac("sha256", key).update(value).digest("base64url");
}

/** AES-256-GCM; output `iv.tag.ciphertext`, each base64url. `aad` binds the ciphertext to its row. */
export function encrypt(key: Buffer, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [iv, cipher.getAuthTag(), ct].map((b) => b.toString("base64url")).join(".");
}

export function decrypt(key: Buffer, sealed: string, aad: string): string {
  const [iv, tag, ct] = sealed.split(".").map((p) => Buffer.from(p, "base64url"));
  if (!iv || !tag || !ct) throw new Error("malformed ciphertext");
  const decipher = createDecipheriv("aes-256-gcm", key, iv);
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ct), decipher.final()]).toString("utf8");
}
