import { createHash } from "node:crypto";

/**
 * RSA public key validation (NIST SP 800-89 5.3.3 partial public key validation, with the
 * bounds of FIPS 186-5 5.4 and 5.5): the one check for every RSA key Torii verifies signatures
 * with, at registration (lib/management/public-keys.ts) and again when a stored key is imported to
 * verify an assertion (lib/oauth/client-auth.ts, lib/oauth/grants/jwt-bearer.ts), so that a key
 * stored before the check existed is not used either.
 *
 * A degenerate key lets anyone forge signatures without a private key (e = 1: the signature is
 * the padded digest itself; a modulus with small factors such as 2^k - 1, or a perfect power: n
 * is factored at once), and a huge one makes each verification expensive. SP 800-89 also asks
 * that n not be prime; that needs a full modular exponentiation (OpenSSL's test runs 64 of them
 * on a prime, seconds for a large n), too slow for a check that runs on stored keys, so it is
 * not made.
 */

export const RSA_MIN_BITS = 2048;
export const RSA_MAX_BITS = 8192;

/** Why an RSA key is refused; null when it is acceptable. */
export type RsaKeyFault = "short" | "long" | "exponent" | "modulus" | "encoding";

const SMALL_PRIMES: readonly bigint[] = (() => {
  const sieve = new Array<boolean>(1000).fill(true);
  const primes: bigint[] = [];
  for (let i = 2; i < 1000; i++) {
    if (!sieve[i]) continue;
    primes.push(BigInt(i));
    for (let j = i * i; j < 1000; j += i) sieve[j] = false;
  }
  return primes;
})();

/** Prime exponents k for the perfect-power check (k <= 8192 / log2(1009) < 820). */
const ROOT_EXPONENTS: readonly number[] = SMALL_PRIMES.map(Number).filter((k) => k < 820);

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The octets of a base64url value, or null when it is not one (RFC 7515 2: no padding, no other characters). */
function octets(value: string): Buffer | null {
  if (!BASE64URL.test(value) || value.length % 4 === 1) return null;
  return Buffer.from(value, "base64url");
}

const toBigInt = (bytes: Buffer): bigint => (bytes.length ? BigInt(`0x${bytes.toString("hex")}`) : 0n);

function bitLength(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  if (i === bytes.length) return 0;
  return (bytes.length - i - 1) * 8 + (32 - Math.clz32(bytes[i]!));
}

/** The floor of the k-th root of n (n > 0, k >= 2): Newton's method from a floating-point estimate above the root. */
function integerRoot(n: bigint, bits: number, k: number): bigint {
  const kn = BigInt(k);
  // log2(n) from its top 53 bits; the estimate is raised by 2^-30 so that it starts above the root.
  const shift = Math.max(0, bits - 53);
  const log2n = shift + Math.log2(Number(n >> BigInt(shift)));
  const exp = log2n / k;
  let x: bigint;
  if (exp < 50) {
    x = BigInt(Math.ceil(2 ** exp)) + 1n;
  } else {
    const whole = Math.floor(exp);
    x = BigInt(Math.ceil(2 ** (exp - whole) * 2 ** 52)) << BigInt(whole - 52);
    x += (x >> 30n) + 1n;
  }
  for (;;) {
    const y = ((kn - 1n) * x + n / x ** (kn - 1n)) / kn;
    if (y >= x) break;
    x = y;
  }
  while (x ** kn > n) x -= 1n;
  return x;
}

function isPerfectPower(n: bigint, bits: number): boolean {
  for (const k of ROOT_EXPONENTS) {
    // Every prime factor is above 1000 (checked before), so a k-th power has more than 9.97 k bits.
    if (k * 9.97 > bits) break;
    const r = integerRoot(n, bits, k);
    if (r ** BigInt(k) === n) return true;
  }
  return false;
}

/**
 * Outcomes of the arithmetic checks, by key: a stored key is checked once per process, refused or
 * not. The callers cache usable keys, but not a refusal (a failed load is dropped from their
 * cache), so a request naming a degenerate stored key would otherwise pay the perfect-power
 * check (up to 17 ms at 8192 bits) each time.
 */
const outcomes = new Map<string, RsaKeyFault | null>();

function arithmeticFault(nBytes: Buffer, eBytes: Buffer): RsaKeyFault | null {
  const bits = bitLength(nBytes);
  if (bits > RSA_MAX_BITS) return "long";
  if (bits < RSA_MIN_BITS) return "short";
  // e odd, 2^16 < e < 2^256 (FIPS 186-5 5.4 (e)); past 32 octets it is too large whatever it holds.
  if (bitLength(eBytes) > 256) return "exponent";
  const e = toBigInt(eBytes);
  if (e % 2n === 0n || e <= 1n << 16n) return "exponent";
  const id = createHash("sha256").update(nBytes).update(".").update(eBytes).digest("base64url");
  const known = outcomes.get(id);
  if (known !== undefined) return known;
  const n = toBigInt(nBytes);
  // n odd, no prime factor below 1000, not a perfect power (SP 800-89 5.3.3).
  let fault: RsaKeyFault | null = null;
  if (SMALL_PRIMES.some((p) => n % p === 0n) || isPerfectPower(n, bits)) fault = "modulus";
  if (outcomes.size >= 1000) outcomes.clear();
  outcomes.set(id, fault);
  return fault;
}

/**
 * Why the RSA public key (n, e), as JWK members, is not acceptable, or null: n of 2048 to 8192
 * bits, odd, with no prime factor below 1000, not a perfect power; e odd with
 * 2^16 < e < 2^256. `canonical` also requires the minimal encoding RFC 7518 2 prescribes
 * (no leading zero octet): for keys being registered; stored keys are not refused for it.
 */
export function rsaPublicKeyFault(n: unknown, e: unknown, options: { canonical?: boolean } = {}): RsaKeyFault | null {
  if (typeof n !== "string" || typeof e !== "string") return "encoding";
  const nBytes = octets(n);
  const eBytes = octets(e);
  if (!nBytes || !eBytes) return "encoding";
  if (options.canonical && (nBytes[0] === 0 || eBytes[0] === 0)) return "encoding";
  return arithmeticFault(nBytes, eBytes);
}

/**
 * Whether a stored JWK may verify signatures: any RSA key must pass `rsaPublicKeyFault`; other
 * key types are left to jose (which checks that an EC point is on its curve).
 */
export function usableVerificationJwk(jwk: unknown): boolean {
  if (!jwk || typeof jwk !== "object") return false;
  const k = jwk as Record<string, unknown>;
  return k.kty !== "RSA" || rsaPublicKeyFault(k.n, k.e) === null;
}
