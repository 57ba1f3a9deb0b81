import { json, NO_STORE } from "@/lib/http/responses";
import { addressForLimits, clientAddress } from "@/lib/http/client-address";
import type { Engine } from "@/lib/engine";
import { authenticateClient, claimedClientId, hasClientCredentials, type AuthenticatedClient } from "./client-auth";
import { InvalidClient, InvalidRequest, type OAuthError, UnauthorizedClient, UnsupportedGrantType } from "@/lib/protocol/errors";
import { corsEndpoint, type CorsScope } from "./cors";
import { readForm, type Form } from "./form";
import { authorizationCodeGrant } from "./grants/authorization-code";
import { clientCredentialsGrant } from "./grants/client-credentials";
import { jwtBearerGrant } from "./grants/jwt-bearer";
import { refreshTokenGrant } from "./grants/refresh-token";
import { tokenExchangeGrant } from "./grants/token-exchange";
import type { Grant } from "./grants/types";
import type { HttpRequest } from "@/lib/http/request";

/** One module per grant; the endpoint only dispatches. */
export const GRANTS: Record<string, Grant> = Object.fromEntries(
  [authorizationCodeGrant, refreshTokenGrant, clientCredentialsGrant, jwtBearerGrant, tokenExchangeGrant].map((g) => [g.type, g]),
);

/**
 * POST /oauth/v2/token (RFC 6749 3.2). Order of checks: method, body, grant type (exists and
 * enabled), client authentication with the grant's methods, client registered for the grant,
 * then the grant itself. Every answer is JSON and never cached.
 */
export const handleToken = corsEndpoint(["POST"], async (inst: Engine, request: HttpRequest, cors: CorsScope) => {
  if (request.method !== "POST") {
    return json({ error: "invalid_request", error_description: "The token endpoint accepts POST only." }, 405, { ...NO_STORE, Allow: "POST" });
  }
  const settings = await inst.store.settings.get();
  const address = clientAddress(request);
  const limit = settings.rateLimits.tokenPerMinute;
  const byAddress = inst.tokenThrottle.hit(inst.store.rateLimits, `addr:${addressForLimits(address)}`, limit);
  if (!byAddress.allowed) return tooManyRequests(byAddress.retryAfterSeconds);

  const form = await readForm(request, ["audience", "resource"]);
  const grantType = form.get("grant_type");
  if (!grantType) throw new InvalidRequest("The grant_type parameter is missing.");
  const grant = Object.hasOwn(GRANTS, grantType) ? GRANTS[grantType] : undefined;
  if (!grant) throw new UnsupportedGrantType(`The grant type ${grantType} is not supported.`);

  if (grant.feature && !settings.features[grant.feature]) {
    throw new UnsupportedGrantType(`The grant type ${grantType} is disabled on this instance; enable the ${grant.feature} feature to use it.`);
  }

  const env = { store: inst.store, issuer: inst.issuer, caches: inst.caches };
  let authenticated: AuthenticatedClient | null = null;
  try {
    if (grant.clientAuth !== "optional") authenticated = await authenticateClient(request, form, env, grant.clientAuth);
    else if (hasClientCredentials(request, form)) authenticated = await authenticateClient(request, form, env);
  } catch (err) {
    if (err instanceof InvalidClient) await auditFailedClientAuth(inst, request, form, err, address);
    throw err;
  }
  const client = authenticated?.client ?? null;
  // A browser application reads the answer (even an error about its grant) from its web origins.
  if (client) cors.client = client;
  // Counted once the client has proved who it is, so that nobody can use up its share by naming
  // it. A public client (`none`) proves nothing: anyone can send its client_id, so a share of its
  // own would let one stranger's requests refuse every one of its users. Its requests count
  // against their addresses only.
  if (authenticated && authenticated.method !== "none") {
    const byClient = inst.tokenThrottle.hit(inst.store.rateLimits, `client:${authenticated.client.id}`, limit);
    if (!byClient.allowed) return tooManyRequests(byClient.retryAfterSeconds);
  }
  if (client && !client.grantTypes.includes(grantType)) {
    throw new UnauthorizedClient(`The client is not registered for the grant type ${grantType}.`);
  }

  const body = await grant.handle({
    request,
    form,
    store: inst.store,
    masterKey: inst.masterKey,
    issuer: inst.issuer,
    caches: inst.caches,
    log: inst.log,
    settings,
    client,
    audit: {
      type: "client",
      id: client?.id ?? null,
      ip: address,
      userAgent: request.headers.get("user-agent"),
    },
  });
  // RFC 6749 §3.3: a scope is one or more scope tokens; when none was granted, no `scope` at all.
  if (body.scope === "") delete body.scope;
  return json(body, 200, { ...NO_STORE });
});

/** 429 with `Retry-After` (RFC 6585 4) and the endpoint's usual JSON error shape. */
function tooManyRequests(retryAfterSeconds: number): Response {
  return json(
    { error: "rate_limited", error_description: "Too many token requests; retry after the time given in Retry-After." },
    429,
    { ...NO_STORE, "Retry-After": String(retryAfterSeconds) },
  );
}

/**
 * A failed client authentication, as an audit event `client.authentication_failed`: sampled per
 * claimed client and address (lib/http/token-throttle.ts, FailureSampler) so that a flood of
 * wrong secrets writes a few rows that carry its size rather than a row per attempt.
 */
async function auditFailedClientAuth(inst: Engine, request: HttpRequest, form: Form, err: OAuthError, address: string): Promise<void> {
  const claimed = claimedClientId(request, form)?.slice(0, 200) ?? null;
  const sample = inst.tokenThrottle.failures.sample(`${claimed ?? ""}\u0001${address}`);
  if (!sample.write) return;
  try {
    await inst.store.audit.record(
      { type: "client", id: null, ip: address, userAgent: request.headers.get("user-agent") },
      {
        action: "client.authentication_failed",
        targetType: "client",
        targetId: claimed,
        details: { reason: err.description, unrecordedBefore: sample.suppressed, unrecordedOtherKeys: sample.overall },
      },
    );
  } catch (e) {
    inst.log.warn({ errClass: (e as Error).name }, "failed client authentication not audited");
  }
}
