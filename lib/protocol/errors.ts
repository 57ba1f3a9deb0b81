/**
 * OAuth 2.0 / OpenID Connect errors, one class per `error` code with its HTTP status.
 * Protocol code throws these; each endpoint family renders them in one place
 * (JSON for back-channel endpoints, a redirect or an error page for the authorization endpoint).
 */
export class OAuthError extends Error {
  readonly description: string;

  constructor(
    readonly error: string,
    description: string,
    readonly status: number = 400,
    readonly headers: Record<string, string> = {},
  ) {
    const text = errorDescription(description);
    super(`${error}: ${text}`);
    this.description = text;
  }

  toJSON(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

/** Longest `error_description` sent: descriptions quote request values, which may be long. */
const MAX_DESCRIPTION = 300;

/**
 * RFC 6749 §5.2 (and §4.1.2.1): `error_description` "MUST NOT include characters outside the set
 * %x20-21 / %x23-5B / %x5D-7E". Descriptions quote what the request sent (a grant type, a scope),
 * so a quote becomes an apostrophe, a backslash a slash, anything else outside the set a question
 * mark, and a long one is cut short.
 */
export function errorDescription(text: string): string {
  const safe = text.replace(/"/g, "'").replace(/\\/g, "/").replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, "?");
  return safe.length > MAX_DESCRIPTION ? `${safe.slice(0, MAX_DESCRIPTION - 3)}...` : safe;
}

const define = (code: string, status = 400) =>
  class extends OAuthError {
    constructor(description: string, headers: Record<string, string> = {}) {
      super(code, description, status, headers);
    }
  };

export const InvalidRequest = define("invalid_request");
export const InvalidClient = define("invalid_client", 401);
export const InvalidGrant = define("invalid_grant");
export const InvalidScope = define("invalid_scope");
export const UnauthorizedClient = define("unauthorized_client");
export const UnsupportedGrantType = define("unsupported_grant_type");
export const UnsupportedResponseType = define("unsupported_response_type");
export const LoginRequired = define("login_required");
export const InteractionRequired = define("interaction_required");
export const AccessDenied = define("access_denied");
export const AccountSelectionRequired = define("account_selection_required");
export const ConsentRequired = define("consent_required");
/**
 * OpenID Connect Core errata ("OpenID Connect Core Error Code unmet_authentication_requirements"):
 * the provider cannot authenticate the user as the client requires, e.g. an essential `acr`.
 */
export const UnmetAuthenticationRequirements = define("unmet_authentication_requirements");
export const RequestNotSupported = define("request_not_supported");
export const RequestUriNotSupported = define("request_uri_not_supported");
export const InvalidTarget = define("invalid_target");
export const ServerError = define("server_error", 500);
/**
 * RFC 6749 4.1.2.1's code for a server that cannot handle the request for now (overload or
 * maintenance); Torii also answers it, with 503 and `Retry-After`, from the back-channel endpoints
 * while the database is out of reach.
 */
export const TemporarilyUnavailable = define("temporarily_unavailable", 503);
