import type { Features } from "@/db/schema";
import { SIGNING_ALG } from "@/lib/keys/signing-keys";
import { ALL_METHODS, ASSERTION_ALGS } from "./client-auth";
import { USER_CLAIMS } from "./claims";
import { AUTHORIZE_METADATA } from "./authorize-discovery";
import { endpointUrl } from "./endpoints";
import { INTROSPECTION_AUTH_METHODS } from "./introspect";
import { ACR_VALUES, GRANT, GRANT_TYPES, RESPONSE_TYPES, SCOPES as KNOWN_SCOPES } from "@/lib/protocol/vocabulary";
import { ID_TOKEN_CLAIMS } from "./tokens";

/**
 * The OpenID Connect Discovery 1.0 document. It advertises exactly what works: an endpoint or
 * value is listed here only once it is implemented and tested. `none` is never an algorithm.
 */
export function discoveryDocument(issuer: string, features: Features, apiScopes: readonly string[] = []): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: endpointUrl(issuer, "authorize"),
    token_endpoint: endpointUrl(issuer, "token"),
    jwks_uri: endpointUrl(issuer, "keys"),
    // Token exchange is a beta feature: advertised only while the instance has it enabled.
    // `implicit` is what the id_token response types are (RFC 8414 2: grant_types_supported).
    grant_types_supported: GRANT_TYPES.filter((g) => g !== GRANT.tokenExchange || features.tokenExchange),
    token_endpoint_auth_methods_supported: ALL_METHODS,
    token_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    introspection_endpoint: endpointUrl(issuer, "introspect"),
    introspection_endpoint_auth_methods_supported: INTROSPECTION_AUTH_METHODS,
    introspection_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    revocation_endpoint: endpointUrl(issuer, "revoke"),
    revocation_endpoint_auth_methods_supported: ALL_METHODS,
    revocation_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    userinfo_endpoint: endpointUrl(issuer, "userinfo"),
    end_session_endpoint: endpointUrl(issuer, "endSession"),
    // The protocol's scopes and every API's (RFC 8707 resources; a client asks for them with `resource`).
    scopes_supported: [...KNOWN_SCOPES, ...apiScopes.filter((s) => !(KNOWN_SCOPES as readonly string[]).includes(s))],
    // Exactly what ID tokens and userinfo can carry (userinfo: `sub` and the user claims).
    claims_supported: [...ID_TOKEN_CLAIMS, ...USER_CLAIMS],
    claim_types_supported: ["normal"],
    acr_values_supported: ACR_VALUES,
    response_types_supported: RESPONSE_TYPES,
    ...AUTHORIZE_METADATA,
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [SIGNING_ALG],
    claims_parameter_supported: true,
    // Request objects are refused (request_not_supported / request_uri_not_supported), so no
    // request_object_signing_alg_values_supported either.
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}
