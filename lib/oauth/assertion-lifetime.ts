/**
 * Rules for the JWTs clients and machine users sign, beyond their signature: JWT bearer grant assertions (RFC 7523
 * 2.1) and `private_key_jwt` client assertions (RFC 7523 2.2). RFC 7523 3 requires `exp` and
 * leaves the acceptable lifetime to the server; Torii accepts at most one hour.
 */

/**
 * Tolerance for clock differences between Torii and the signer, in seconds: applied to `exp` and
 * `nbf` (by jose), to an `iat` in the future and to the one-hour limit measured from now. Small,
 * so that an expired assertion is not accepted for long.
 */
export const CLOCK_SKEW_SECONDS = 30;

/** The longest an assertion may be valid: `exp - iat`, or `exp - now` when it has no `iat`. */
export const MAX_ASSERTION_VALIDITY_SECONDS = 3600;

/**
 * Why an assertion that passed jose's checks (signature, `exp` present and not past, `nbf`) is
 * still refused, or null. `iat` is optional (RFC 7519 4.1.6); when present it may not lie in the
 * future and it measures the validity, since it is what the signer meant: an assertion signed for
 * two hours is refused even in its last minutes.
 */
export function assertionTimeProblem(payload: { exp?: number; iat?: number }, now: number): string | null {
  if (typeof payload.exp !== "number") return "has no exp";
  if (payload.iat !== undefined) {
    if (payload.iat > now + CLOCK_SKEW_SECONDS) return "was issued in the future";
    if (payload.exp - payload.iat > MAX_ASSERTION_VALIDITY_SECONDS) return `is valid for more than ${MAX_ASSERTION_VALIDITY_SECONDS} s (exp - iat)`;
  } else if (payload.exp - now > MAX_ASSERTION_VALIDITY_SECONDS + CLOCK_SKEW_SECONDS) {
    return `expires more than ${MAX_ASSERTION_VALIDITY_SECONDS} s ahead`;
  }
  return null;
}

/** Until when a used `jti` must be remembered: as long as the assertion would still be accepted. */
export function jtiMemoryUntil(exp: number): Date {
  return new Date((exp + CLOCK_SKEW_SECONDS) * 1000);
}

/**
 * RFC 7519 4.1: what the registered claims of a JWT someone else signed must be when present.
 * jose checks `exp`/`nbf`/`iat` and the claims it is given an expected value for, but an `aud`
 * array passes when it holds the expected value, whatever else it holds (`[issuer, 5]`), and a
 * claim without an expected value is not looked at. Null when all are well-formed.
 */
export function claimTypeProblem(p: Record<string, unknown>): string | null {
  for (const c of ["iss", "sub", "jti"]) if (p[c] !== undefined && typeof p[c] !== "string") return `claim ${c} is not a string`;
  if (p.aud !== undefined && typeof p.aud !== "string" && !(Array.isArray(p.aud) && p.aud.every((a) => typeof a === "string"))) {
    return "claim aud is not a string or an array of strings";
  }
  for (const c of ["exp", "nbf", "iat"]) if (p[c] !== undefined && !Number.isFinite(p[c])) return `claim ${c} is not a number`;
  return null;
}
