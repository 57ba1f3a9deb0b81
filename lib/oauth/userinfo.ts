import { readBodyText } from "@/lib/http/body";
import { json, NO_STORE, oauthErrorResponse, unexpectedOAuthError } from "@/lib/http/responses";
import type { Engine } from "@/lib/engine";
import { resolveAccessToken } from "./access-token";
import { claimsForScopes } from "./claims";
import { OAuthError } from "@/lib/protocol/errors";
import { isFormEncoded } from "@/lib/http/body";
import { corsEndpoint, type CorsScope } from "./cors";
import { parseForm } from "./form";
import type { HttpRequest } from "@/lib/http/request";

/** RFC 6750 2.1: b64token after the scheme name. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** A userinfo failure as RFC 6750 3 renders it: the status and a `WWW-Authenticate: Bearer` challenge. */
class BearerError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 413,
    /** Absent when the request carried no token at all (RFC 6750 3.1: no error code then). */
    readonly code?: "invalid_request" | "invalid_token" | "insufficient_scope",
    readonly description?: string,
    readonly scope?: string,
  ) {
    super(code ?? "no token");
  }

  response(): Response {
    // RFC 6750 3: the challenge's values are limited to %x20-21 / %x23-5B / %x5D-7E. A description
    // can name a request parameter, and so carry whatever the client sent (a line break, U+FFFD):
    // quotes and backslashes are left out, other characters outside the set shown as "?". The JSON
    // body carries the description unchanged.
    const q = (v: string) => `"${v.replace(/["\\]/g, "").replace(/[^\x20-\x7e]/g, "?")}"`;
    const params = [`realm=${q("torii")}`];
    if (this.code) params.push(`error=${q(this.code)}`);
    if (this.description) params.push(`error_description=${q(this.description)}`);
    if (this.scope) params.push(`scope=${q(this.scope)}`);
    const headers = { ...NO_STORE, "WWW-Authenticate": `Bearer ${params.join(", ")}` };
    if (!this.code) return new Response(null, { status: this.status, headers });
    return json({ error: this.code, error_description: this.description }, this.status, headers);
  }
}

/**
 * The access token of a userinfo request: the Authorization header (RFC 6750 2.1) or, on POST,
 * an `access_token` form parameter (2.2). Using both is `invalid_request` (RFC 6750 2).
 * A token in the URI query (2.3) is not accepted: it ends up in logs and browser history.
 */
async function presentedToken(request: HttpRequest): Promise<string> {
  let fromHeader: string | undefined;
  const auth = request.headers.get("authorization");
  if (auth !== null) {
    // Any Bearer header must carry exactly one b64token; "Bearer" alone (HTTP trims the space
    // before an empty token) or with several words is malformed, not absent.
    if (/^Bearer(\s|$)/i.test(auth)) {
      const value = auth.slice(6).trim();
      if (!B64TOKEN.test(value)) throw new BearerError(400, "invalid_request", "The Authorization header is malformed.");
      fromHeader = value;
    }
  }
  let fromBody: string | undefined;
  if (request.method === "POST" && isFormEncoded(request)) {
    let form;
    try {
      form = parseForm(await readBodyText(request));
    } catch (err) {
      if (err instanceof OAuthError) throw new BearerError(err.status === 413 ? 413 : 400, "invalid_request", err.description);
      throw new BearerError(400, "invalid_request", "The request body could not be read.");
    }
    fromBody = form.get("access_token");
  }
  if (fromHeader && fromBody) throw new BearerError(400, "invalid_request", "The access token was sent in more than one way.");
  const token = fromHeader ?? fromBody;
  if (!token) throw new BearerError(401);
  return token;
}

/**
 * GET and POST /oidc/v1/userinfo (OIDC Core 5.3): `sub` and the standard claims of the granted
 * scopes and of the `claims` request parameter, nothing else. The token must be active (not expired, not revoked by its client or a
 * logout), be about a user (a client-credentials token is not), and carry `openid`.
 */
export const handleUserinfo = corsEndpoint(["GET", "POST"], async (inst: Engine, request: HttpRequest, cors: CorsScope): Promise<Response> => {
  // HEAD is answered as GET is, without the body (RFC 9110 9.3.2; the server drops it).
  if (request.method !== "GET" && request.method !== "POST" && request.method !== "HEAD") {
    return json({ error: "invalid_request", error_description: "The userinfo endpoint accepts GET and POST." }, 405, {
      ...NO_STORE,
      Allow: "GET, HEAD, POST",
    });
  }
  try {
    const token = await presentedToken(request);
    const t = await resolveAccessToken(inst, token);
    if (!t) throw new BearerError(401, "invalid_token", "The access token is invalid, expired or revoked.");
    // A browser application reads the answer only from one of its client's web origins.
    cors.client = (await inst.store.clients.get(t.clientId)) ?? undefined;
    if (!t.user) throw new BearerError(401, "invalid_token", "The access token is not about a user.");
    if (!t.scopes.includes("openid")) throw new BearerError(403, "insufficient_scope", "The access token lacks the openid scope.", "openid");
    const { primaryDomain } = await inst.store.settings.get();
    // Claims the authorization request asked for by name (OIDC Core 5.5) are kept with its grant.
    const requested = t.grantId ? (await inst.store.grantClaims.userinfo(t.grantId)) : [];
    const roles = t.scopes.includes("roles") ? { roles: await inst.store.roles.byApi(t.user.id) } : {};
    return json({ ...claimsForScopes(t.user, t.scopes, primaryDomain, requested), ...roles, sub: t.user.id }, 200, { ...NO_STORE });
  } catch (err) {
    if (err instanceof BearerError) return err.response();
    return oauthErrorResponse(unexpectedOAuthError(inst.log, err, { path: new URL(request.url).pathname }));
  }
});
