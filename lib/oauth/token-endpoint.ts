import { backChannel, json, NO_STORE } from "@/lib/http/responses";
import { clientAddress } from "@/lib/http/client-address";
import type { Engine } from "@/lib/engine";
import { getSettings } from "@/lib/store/settings";
import { authenticateClient, hasClientCredentials } from "./client-auth";
import { InvalidRequest, UnauthorizedClient, UnsupportedGrantType } from "./errors";
import { readForm } from "./form";
import { authorizationCodeGrant } from "./grants/authorization-code";
import { clientCredentialsGrant } from "./grants/client-credentials";
import { jwtBearerGrant } from "./grants/jwt-bearer";
import { refreshTokenGrant } from "./grants/refresh-token";
import { tokenExchangeGrant } from "./grants/token-exchange";
import type { Grant } from "./grants/types";

/** One module per grant; the endpoint only dispatches. */
export const GRANTS: Record<string, Grant> = Object.fromEntries(
  [authorizationCodeGrant, refreshTokenGrant, clientCredentialsGrant, jwtBearerGrant, tokenExchangeGrant].map((g) => [g.type, g]),
);

/**
 * POST /oauth/v2/token (RFC 6749 3.2). Order of checks: method, body, grant type (exists and
 * enabled), client authentication with the grant's methods, client registered for the grant,
 * then the grant itself. Every answer is JSON and never cached.
 */
export const handleToken = backChannel(async (inst: Engine, request: Request) => {
  if (request.method !== "POST") {
    return json({ error: "invalid_request", error_description: "The token endpoint accepts POST only." }, 405, { ...NO_STORE, Allow: "POST" });
  }
  const form = await readForm(request, ["audience", "resource"]);
  const grantType = form.get("grant_type");
  if (!grantType) throw new InvalidRequest("The grant_type parameter is missing.");
  const grant = Object.hasOwn(GRANTS, grantType) ? GRANTS[grantType] : undefined;
  if (!grant) throw new UnsupportedGrantType(`The grant type ${grantType} is not supported.`);

  const settings = await getSettings(inst);
  if (grant.feature && !settings.features[grant.feature]) {
    throw new UnsupportedGrantType(`The grant type ${grantType} is disabled on this instance; enable the ${grant.feature} feature to use it.`);
  }

  const env = inst;
  let client = null;
  if (grant.clientAuth !== "optional") client = (await authenticateClient(request, form, env, grant.clientAuth)).client;
  else if (hasClientCredentials(request, form)) client = (await authenticateClient(request, form, env)).client;
  if (client && !client.grantTypes.includes(grantType)) {
    throw new UnauthorizedClient(`The client is not registered for the grant type ${grantType}.`);
  }

  const body = await grant.handle({
    request,
    form,
    db: inst.db,
    masterKey: inst.masterKey,
    issuer: inst.issuer,
    caches: inst.caches,
    log: inst.log,
    settings,
    client,
    audit: {
      type: "client",
      id: client?.id ?? null,
      ip: clientAddress(request),
      userAgent: request.headers.get("user-agent"),
    },
  });
  return json(body, 200, { ...NO_STORE });
});
