import { INTROSPECTION_AUTH_METHODS } from "@/lib/protocol/vocabulary";
import { json, NO_STORE } from "@/lib/http/responses";
import type { Engine } from "@/lib/engine";
import { loginNameOf } from "@/lib/users/fields";
import { resolveAccessToken, type ActiveAccessToken } from "./access-token";
import { claimsForScopes } from "./claims";
import { authenticateApi, authenticateClient } from "./client-auth";
import { InvalidRequest } from "@/lib/protocol/errors";
import { corsEndpoint, type CorsScope } from "./cors";
import { readForm } from "./form";
import { scopeString } from "./scopes";
import type { HttpRequest } from "@/lib/http/request";

/** Spec 5: introspection accepts only these two methods; every other one is `invalid_client`. */
export { INTROSPECTION_AUTH_METHODS };

const INACTIVE = { active: false } as const;

/**
 * The RFC 7662 answer for an active token, as seen by `clientId`: inactive unless that client is
 * in the token's audience (spec 4.4), so one resource server cannot read another's tokens.
 * Registered fields win over user claims of the same name.
 */
export function introspectionResponse(
  t: ActiveAccessToken | undefined,
  caller: { clientId: string } | { apiIdentifier: string },
  env: { issuer: string; primaryDomain: string },
  roles: readonly string[] | null = null,
): Record<string, unknown> {
  if (!t) return INACTIVE;
  // An API sees only tokens for itself (RFC 7662 2.2); a client its own tokens and those naming it.
  const allowed = "apiIdentifier" in caller ? t.audience.includes(caller.apiIdentifier) : t.audience.includes(caller.clientId) || t.clientId === caller.clientId;
  if (!allowed) return INACTIVE;
  const body: Record<string, unknown> = {
    active: true,
    // Left out when nothing was granted: an empty string is no scope (RFC 6749 §3.3).
    ...(t.scopes.length ? { scope: scopeString(t.scopes) } : {}),
    client_id: t.clientId,
    token_type: "Bearer",
    exp: t.exp,
    iat: t.iat,
    nbf: t.nbf,
    sub: t.sub,
    aud: t.audience.length === 1 ? t.audience[0] : t.audience,
    iss: env.issuer,
    jti: t.jti,
  };
  if (t.user) body.username = loginNameOf(t.user, env.primaryDomain);
  if (t.actor) body.act = t.actor;
  if (roles) body.roles = [...roles];
  return t.user ? { ...claimsForScopes(t.user, t.scopes, env.primaryDomain), ...body } : body;
}

/**
 * POST /oauth/v2/introspect (RFC 7662). Access tokens only: a refresh token (or an ID token)
 * answers `{active: false}` whatever `token_type_hint` says. Refresh tokens are credentials
 * that only their client ever holds and never presents to a resource server, so reporting on
 * them would help nobody but whoever found one; the client that holds one learns its state at
 * the token endpoint. `token_type_hint` is therefore accepted and ignored.
 */
export const handleIntrospect = corsEndpoint(["POST"], async (inst: Engine, request: HttpRequest, cors: CorsScope) => {
  if (request.method !== "POST") {
    return json({ error: "invalid_request", error_description: "The introspection endpoint accepts POST only." }, 405, {
      ...NO_STORE,
      Allow: "POST",
    });
  }
  const form = await readForm(request);
  const env = inst;
  const apis = await inst.store.apis.list();
  // An API authenticates with its own credentials (client-auth.ts), a client with its registered method.
  const callingApi = await authenticateApi(request, form, env, apis);
  let caller: { clientId: string } | { apiIdentifier: string };
  if (callingApi) {
    caller = { apiIdentifier: callingApi.identifier };
  } else {
    const { client } = await authenticateClient(request, form, env, INTROSPECTION_AUTH_METHODS);
    cors.client = client;
    caller = { clientId: client.id };
  }
  const token = form.get("token");
  if (!token) throw new InvalidRequest("The token parameter is missing.");
  const { primaryDomain } = await inst.store.settings.get();
  const t = await resolveAccessToken(env, token);
  // A token for an API carries its subject's roles there, as they are now.
  const api = t ? apis.find((a) => t.audience.includes(a.identifier)) : undefined;
  const roles = t && api ? await inst.store.roles.for(t.user ? { userId: t.user.id } : { clientId: t.clientId }, api.id) : null;
  const body = introspectionResponse(t, caller, { issuer: env.issuer, primaryDomain }, roles);
  return json(body, 200, { ...NO_STORE });
});
