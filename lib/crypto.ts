import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** `bytes` of CSPRNG output, base64url: 32 bytes = 256 bits for every secret, token and code. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/** Numeric identifiers (users, clients) that are safe in URLs and login names and unguessable enough to not leak counts. */
export function randomId(): string {
  const b = randomBytes(8);
  return (b.readBigUInt64BE() % 10n ** 18n).toString().padStart(18, "0");
}

/**
 * Hash for high-entropy secrets (client secrets, tokens, codes, PATs). A password hash would be
 * wasted on 256 random bits and would make the token endpoint slow.
 */
export function sha256(value: string): string {
  return createHash("sha256").update(value).digest("base64url");
}

export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  // Compare equal-length digests so that the length of the secret does not leak either.
  const ha = createHash("sha256").update(ab).digest();
  const hb = createHash("sha256").update(bb).digest();
  return timingSafeEqual(ha, hb) && ab.length === bb.length;
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
