import type { Features } from "@/db/schema";
import { SIGNING_ALG } from "@/lib/keys/signing-keys";
import { ALL_METHODS, ASSERTION_ALGS } from "./client-auth";
import { USER_CLAIMS } from "./claims";
import { AUTHORIZE_METADATA } from "./authorize-discovery";
import { endpointUrl } from "./endpoints";
import { INTROSPECTION_AUTH_METHODS } from "./introspect";
import { GRANT, RESPONSE_TYPES, SCOPES as KNOWN_SCOPES, TOKEN_ENDPOINT_GRANT_TYPES } from "@/lib/protocol/vocabulary";

/**
 * The OpenID Connect Discovery 1.0 document. It advertises exactly what works: an endpoint or
 * value is listed here only once it is implemented and tested. `none` is never an algorithm.
 */
export function discoveryDocument(issuer: string, features: Features): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: endpointUrl(issuer, "authorize"),
    token_endpoint: endpointUrl(issuer, "token"),
    jwks_uri: endpointUrl(issuer, "keys"),
    // Token exchange is a beta feature: advertised only while the instance has it enabled.
    grant_types_supported: TOKEN_ENDPOINT_GRANT_TYPES.filter((g) => g !== GRANT.tokenExchange || features.tokenExchange),
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
    scopes_supported: KNOWN_SCOPES,
    claims_supported: ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "azp", "at_hash", "sid", "amr", ...USER_CLAIMS],
    response_types_supported: RESPONSE_TYPES,
    ...AUTHORIZE_METADATA,
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [SIGNING_ALG],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}
