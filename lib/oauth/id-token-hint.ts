import { isTokenFault, type TokenEnv } from "./tokens";
import { compactVerify } from "jose";
import { SIGNING_ALG } from "@/lib/keys/signing-keys";

export type IdTokenHint = { sub: string; azp: string; aud: string[]; sid: string | null };

/**
 * Verifies an `id_token_hint` (OIDC Core 3.1.2.1 at the authorization endpoint, RP-Initiated
 * Logout 1.0 section 2 at end_session): an ID token we issued, signed by one
 * of our published keys with our algorithm (so `alg: none`, HS256 and foreign keys fail), with
 * our issuer. Its expiry is deliberately not checked: an RP logs a user out long after the ID
 * token expired (section 4 lets the OP accept such hints). Nor is revocation: a hint only
 * names the client and the user; logging out twice must keep working. Undefined when invalid.
 */
export async function verifyIdTokenHint(
  env: TokenEnv,
  token: string,
): Promise<IdTokenHint | undefined> {
  if (token.length > 8192) return undefined;
  // Read outside the `try`: keys that cannot be read (the database out of reach) make the hint
  // unverifiable for now, not invalid.
  const keys = await env.store.keys.verification();
  let verified;
  try {
    verified = await compactVerify(token, keys, { algorithms: [SIGNING_ALG] });
  } catch (err) {
    if (isTokenFault(err)) return undefined;
    throw err;
  }
  const { payload, protectedHeader } = verified;
  // An access token (typ at+jwt) is not an ID token, even though we signed it.
  if ((protectedHeader.typ ?? "JWT") !== "JWT") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(payload));
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== "object") return undefined;
  const claims = parsed as Record<string, unknown>;
  if (claims.iss !== env.issuer || typeof claims.sub !== "string" || !claims.sub) return undefined;
  const aud = (Array.isArray(claims.aud) ? claims.aud : [claims.aud]).filter((a): a is string => typeof a === "string");
  // OIDC Core 2: azp names the party the token was issued to; without it, a single audience does.
  const azp = typeof claims.azp === "string" ? claims.azp : aud.length === 1 ? aud[0] : undefined;
  if (!azp || !aud.includes(azp)) return undefined;
  return { sub: claims.sub, azp, aud, sid: typeof claims.sid === "string" ? claims.sid : null };
}
