import { createPublicKey, type JsonWebKey as NodeJwk } from "node:crypto";
import { z } from "zod";
import { RSA_MAX_BITS, RSA_MIN_BITS, rsaPublicKeyFault, type RsaKeyFault } from "@/lib/keys/rsa-public-key";
import { problem, type Problem } from "@/lib/problem";
import { addProblem } from "./http";

/** Members that only a private or symmetric JWK has (RFC 7518 §6). */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

const RSA_ALGS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512"];
const EC_ALGS: Record<string, string> = { "P-256": "ES256", "P-384": "ES384", "P-521": "ES512" };
/** Edwards curves (RFC 8037): both sign as EdDSA. */
const OKP_CURVES = ["Ed25519", "Ed448"];

type CheckedKey = { jwk: Record<string, unknown>; alg: string };

/** Why an RSA key is refused (lib/keys/rsa-public-key.ts); each message completes "The key ...". */
const RSA_FAULTS: Record<RsaKeyFault, Problem> = {
  short: problem("key_rsa_short", `an RSA key must be at least ${RSA_MIN_BITS} bits long`),
  long: problem("key_rsa_long", `is too long: RSA keys longer than ${RSA_MAX_BITS} bits are not accepted`),
  exponent: problem("key_rsa_exponent", "has an invalid RSA public exponent: it must be odd and between 2^16 and 2^256"),
  modulus: problem("key_rsa_modulus", "has an RSA modulus that is not a valid modulus (it must be odd, with no prime factor below 1000, and not a perfect power)"),
  encoding: problem("key_invalid", "must encode n and e in base64url without padding or leading zero octets"),
};

/**
 * Checks that a JWK is a usable public signing key: RSA of 2048 to 8192 bits with sound
 * parameters (lib/keys/rsa-public-key.ts), EC on P-256 / P-384 / P-521 or OKP on Ed25519 / Ed448
 * (every algorithm discovery advertises for assertions, client-auth.ts ASSERTION_ALGS), with no
 * private members, and an `alg` that fits the key (derived when not declared: RS256 for RSA,
 * ES256/ES384/ES512 by curve, EdDSA). Returns the public members only, or why not (its message
 * completes "The key ...").
 */
export function checkPublicJwk(input: unknown): CheckedKey | Problem {
  if (!input || typeof input !== "object" || Array.isArray(input)) return problem("key_not_object", "must be a JWK object");
  const jwk = input as Record<string, unknown>;
  const leaked = PRIVATE_MEMBERS.filter((m) => m in jwk);
  if (leaked.length) return problem("key_private", `must be a public key; remove the private member(s) ${leaked.join(", ")}`, { members: leaked.join(", ") });
  if (jwk.use !== undefined && jwk.use !== "sig") return problem("key_use", 'use must be "sig"');
  let alg: string;
  let pub: Record<string, unknown>;
  if (jwk.kty === "RSA") {
    if (typeof jwk.n !== "string" || typeof jwk.e !== "string") return problem("key_invalid", "an RSA key needs n and e");
    alg = typeof jwk.alg === "string" ? jwk.alg : "RS256";
    if (!RSA_ALGS.includes(alg)) return problem("key_alg", `alg ${alg} does not fit an RSA key (use one of ${RSA_ALGS.join(", ")})`, { alg, allowed: RSA_ALGS.join(", ") });
    pub = { kty: "RSA", n: jwk.n, e: jwk.e };
  } else if (jwk.kty === "EC") {
    if (typeof jwk.crv !== "string" || !(jwk.crv in EC_ALGS)) return problem("key_ec_curve", "an EC key must use the curve P-256, P-384 or P-521");
    if (typeof jwk.x !== "string" || typeof jwk.y !== "string") return problem("key_invalid", "an EC key needs x and y");
    const expected = EC_ALGS[jwk.crv]!;
    alg = typeof jwk.alg === "string" ? jwk.alg : expected;
    if (alg !== expected) return problem("key_alg", `alg ${alg} does not fit a ${jwk.crv} key (use ${expected})`, { alg, allowed: expected });
    pub = { kty: "EC", crv: jwk.crv, x: jwk.x, y: jwk.y };
  } else if (jwk.kty === "OKP") {
    if (typeof jwk.crv !== "string" || !OKP_CURVES.includes(jwk.crv)) return problem("key_okp_curve", "an OKP key must use the curve Ed25519 or Ed448");
    if (typeof jwk.x !== "string") return problem("key_invalid", "an OKP key needs x");
    alg = typeof jwk.alg === "string" ? jwk.alg : "EdDSA";
    if (alg !== "EdDSA") return problem("key_alg", `alg ${alg} does not fit a ${jwk.crv} key (use EdDSA)`, { alg, allowed: "EdDSA" });
    pub = { kty: "OKP", crv: jwk.crv, x: jwk.x };
  } else {
    return problem("key_kty", "kty must be RSA, EC or OKP");
  }
  try {
    createPublicKey({ key: pub as NodeJwk, format: "jwk" });
  } catch {
    return problem("key_invalid", "is not a valid key");
  }
  if (jwk.kty === "RSA") {
    const fault = rsaPublicKeyFault(jwk.n, jwk.e, { canonical: true });
    if (fault) return RSA_FAULTS[fault];
  }
  if (typeof jwk.kid === "string") pub.kid = jwk.kid;
  return { jwk: { ...pub, alg, use: "sig" }, alg };
}

/** A registered public key set (`jwks` of a client or an API): 1 to 20 keys, each checked above. */
export const publicKeySet = z
  .object({ keys: z.array(z.record(z.string(), z.unknown())).min(1).max(20) })
  .transform((set, ctx) => {
    const keys: Record<string, unknown>[] = [];
    set.keys.forEach((k, i) => {
      const checked = checkPublicJwk(k);
      if ("code" in checked) addProblem(ctx, { ...checked, message: `Key ${checked.message}.` }, ["keys", i]);
      else keys.push(checked.jwk);
    });
    return { keys };
  });
