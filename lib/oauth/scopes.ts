import { InvalidScope } from "@/lib/protocol/errors";

import { SCOPES } from "@/lib/protocol/vocabulary";

export { SCOPES as KNOWN_SCOPES, USER_CLAIM_SCOPES, type Scope } from "@/lib/protocol/vocabulary";

const KNOWN = new Set<string>(SCOPES);
// RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * Parses a space-delimited scope parameter: malformed values are `invalid_scope`; order kept,
 * duplicates dropped. Values may be API scopes (lib/oauth/resources.ts checks those).
 */
export function parseScopeTokens(value: string | undefined): string[] {
  if (value === undefined) return [];
  const parts = value.split(" ").filter((p) => p !== "");
  const out: string[] = [];
  for (const p of parts) {
    if (!SCOPE_TOKEN.test(p)) throw new InvalidScope("The scope parameter is malformed.");
    if (!out.includes(p)) out.push(p);
  }
  return out;
}

export { isProtocolScope } from "@/lib/protocol/vocabulary";

/** Parses a scope parameter of protocol scopes only; unknown values are `invalid_scope`. */
export function parseScope(value: string | undefined): string[] {
  const out = parseScopeTokens(value);
  for (const p of out) if (!KNOWN.has(p)) throw new InvalidScope(`Unknown scope: ${p}.`);
  return out;
}

/** Requested scopes must lie within what was granted; an empty request means "all of it". */
export function narrowScopes(requested: string[], granted: string[]): string[] {
  if (!requested.length) return granted;
  const extra = requested.filter((s) => !granted.includes(s));
  if (extra.length) throw new InvalidScope(`Scope exceeds the granted scope: ${extra.join(" ")}.`);
  return requested;
}

export function scopeString(scopes: string[]): string {
  return scopes.join(" ");
}
