import { constantTimeEqual, hmac } from "@/lib/crypto";
import type { HttpRequest } from "@/lib/http/request";

/**
 * CSRF token of a login form: an HMAC of the user agent and the authorization request under the
 * master key. A forged cross-site post lacks both the SameSite cookie and this value, and a
 * token taken from one browser or flow is useless in another.
 */
export function csrfToken(masterKey: Buffer, userAgentId: string, authRequestId: string): string {
  return hmac(masterKey, `csrf:${userAgentId}:${authRequestId}`);
}

export function verifyCsrf(masterKey: Buffer, userAgentId: string, authRequestId: string, presented: unknown): boolean {
  if (typeof presented !== "string" || !presented) return false;
  return constantTimeEqual(csrfToken(masterKey, userAgentId, authRequestId), presented);
}

/**
 * Defence in depth for unsafe methods: a foreign `Origin` is refused. Browsers send `null` for
 * form posts from pages under `Referrer-Policy: no-referrer` (some privacy settings impose it),
 * so `null` rests on the token.
 */
export function sameOrigin(request: HttpRequest, issuer: string): boolean {
  const origin = request.headers.get("origin");
  if (origin === null || origin === "null") return true;
  return origin === new URL(issuer).origin;
}
