import { hash, verify } from "@node-rs/argon2";
import { randomBytes } from "node:crypto";
import type { PasswordPolicy } from "@/db/schema";
import type { Memo } from "@/lib/cache/memo";

// OWASP's argon2id baseline (19 MiB, 2 iterations, 1 lane): about 20 ms here, slow enough for guessing, fast enough for login.
const OPTIONS = { algorithm: 2 /* Algorithm.Argon2id: a const enum, unusable with isolatedModules */, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(phc: string, password: string): Promise<boolean> {
  try {
    return await verify(phc, password);
  } catch {
    return false;
  }
}

/**
 * A hash of a random value, verified against when a user has no password, so timing does not tell.
 * Made once per engine (`engine.memo`): hashing costs as much as a sign-in.
 */
export function dummyPasswordHash(memo: Memo): Promise<string> {
  return memo.get("dummy-password-hash", () => hashPassword(randomBytes(16).toString("hex")));
}

const POLICY_VIOLATIONS = ["minLength", "uppercase", "lowercase", "number", "symbol", "maxLength"] as const;
export type PolicyViolation = (typeof POLICY_VIOLATIONS)[number];

/**
 * The policy's codes among `codes`, each once: what a page may name. The pages get the codes back
 * through their address after a refused form, where anyone can write anything; an unknown code
 * would be looked up as a message (and logged as missing) once per entry.
 */
export function knownPolicyViolations(codes: readonly string[]): PolicyViolation[] {
  return POLICY_VIOLATIONS.filter((v) => codes.includes(v));
}

export function checkPasswordPolicy(password: string, policy: PasswordPolicy): PolicyViolation[] {
  const v: PolicyViolation[] = [];
  // Counted in code points (NIST SP 800-63B: each Unicode code point is one character).
  if (Array.from(password).length < policy.minLength) v.push("minLength");
  if (password.length > 256) v.push("maxLength");
  if (policy.requireUppercase && !/\p{Lu}/u.test(password)) v.push("uppercase");
  if (policy.requireLowercase && !/\p{Ll}/u.test(password)) v.push("lowercase");
  if (policy.requireNumber && !/\p{N}/u.test(password)) v.push("number");
  if (policy.requireSymbol && !/[^\p{L}\p{N}]/u.test(password)) v.push("symbol");
  return v;
}

export function describePolicyViolation(v: PolicyViolation, policy: PasswordPolicy): string {
  switch (v) {
    case "minLength":
      return `must be at least ${policy.minLength} characters long`;
    case "maxLength":
      return "must be at most 256 characters long";
    case "uppercase":
      return "must contain an uppercase letter";
    case "lowercase":
      return "must contain a lowercase letter";
    case "number":
      return "must contain a number";
    case "symbol":
      return "must contain a symbol";
  }
}

/** A password that satisfies any sane policy: 24 characters from four classes. */
export function generatePassword(): string {
  const sets = ["ABCDEFGHJKLMNPQRSTUVWXYZ", "abcdefghijkmnopqrstuvwxyz", "23456789", "-_.!@#%+="];
  const all = sets.join("");
  const bytes = randomBytes(24);
  const chars = [...bytes].map((b, i) => (i < sets.length ? sets[i]![b % sets[i]!.length]! : all[b % all.length]!));
  // Fisher–Yates with fresh randomness, so that the class positions are not fixed.
  const r = randomBytes(chars.length);
  for (let i = chars.length - 1; i > 0; i--) {
    const j = r[i]! % (i + 1);
    [chars[i], chars[j]] = [chars[j]!, chars[i]!];
  }
  return chars.join("");
}
