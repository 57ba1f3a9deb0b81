import { SIGNING_ALG } from "@/lib/keys/signing-keys";
import { endpointUrl } from "./endpoints";

/**
 * The OpenID Connect Discovery 1.0 document. It advertises exactly what works: an endpoint or
 * value is listed here only once it is implemented and tested. `none` is never an algorithm.
 */
export function discoveryDocument(issuer: string): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: endpointUrl(issuer, "authorize"),
    jwks_uri: endpointUrl(issuer, "keys"),
    response_types_supported: ["code", "id_token", "id_token token"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [SIGNING_ALG],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}
