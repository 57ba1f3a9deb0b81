/**
 * The protocol's words, written once. Discovery, parameter validation, the management API's
 * schemas (and so its OpenAPI document) and the console's forms all take their values from
 * here, so what Torii advertises, accepts and lets administrators register cannot drift apart.
 * This module imports nothing: every layer may depend on it.
 */

/** Grant types a client can be registered for (RFC 6749, OIDC Core implicit, RFC 7523, RFC 8693). */
export const GRANT = {
  authorizationCode: "authorization_code",
  implicit: "implicit",
  refreshToken: "refresh_token",
  clientCredentials: "client_credentials",
  jwtBearer: "urn:ietf:params:oauth:grant-type:jwt-bearer",
  tokenExchange: "urn:ietf:params:oauth:grant-type:token-exchange",
} as const;
export const GRANT_TYPES = Object.values(GRANT);
export type GrantType = (typeof GRANT_TYPES)[number];
/** The grant types the token endpoint serves (implicit has no token request). */
export const TOKEN_ENDPOINT_GRANT_TYPES = GRANT_TYPES.filter((g) => g !== GRANT.implicit);

/** Response types in their canonical spelling (values sorted, space-separated). */
export const RESPONSE_TYPES = ["code", "id_token", "id_token token"] as const;
export type ResponseType = (typeof RESPONSE_TYPES)[number];
/** Response types of the implicit flow: tokens come back from the authorization endpoint. */
export const IMPLICIT_RESPONSE_TYPES: readonly ResponseType[] = ["id_token", "id_token token"];
export function isImplicit(responseType: ResponseType): boolean {
  return IMPLICIT_RESPONSE_TYPES.includes(responseType);
}

/** OAuth 2.0 Multiple Response Type Encoding Practices and Form Post Response Mode. */
export const RESPONSE_MODES = ["query", "fragment", "form_post"] as const;
export type ResponseMode = (typeof RESPONSE_MODES)[number];

export const PROMPTS = ["none", "login", "select_account", "create", "consent"] as const;
export type Prompt = (typeof PROMPTS)[number];

/**
 * Authentication context classes (OIDC Core 2, `acr`): a sign-in with one factor, and one with a
 * second factor or a passkey. `acr_values` (or an essential `acr` claim) whose preferred class is
 * `mfa` makes the sign-in policy ask for a second factor.
 */
export const ACR = { password: "urn:torii:acr:pwd", multiFactor: "urn:torii:acr:mfa" } as const;
export const ACR_VALUES: readonly string[] = [ACR.password, ACR.multiFactor];

/** The class a sign-in's `amr` (RFC 8176) achieved; none for a sign-in without a person (jwt-bearer). */
export function acrOf(amr: readonly string[] | null | undefined): string | null {
  if (!amr?.length) return null;
  if (amr.includes("mfa")) return ACR.multiFactor;
  return amr.includes("pwd") ? ACR.password : null;
}

/** Whether the client's classes, in its order of preference, ask for a second factor first. */
export function asksForMultiFactor(acrValues: readonly string[] | null | undefined): boolean {
  return (acrValues ?? []).find((v) => ACR_VALUES.includes(v)) === ACR.multiFactor;
}

/** Client authentication methods (OIDC Core 9, RFC 7523). */
export const CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none", "private_key_jwt"] as const;
export type ClientAuthMethod = (typeof CLIENT_AUTH_METHODS)[number];
/** Methods that authenticate with a shared secret, so the client gets one at creation. */
export const SECRET_AUTH_METHODS: readonly ClientAuthMethod[] = ["client_secret_basic", "client_secret_post"];
/** Introspection is for confidential callers that prove themselves strongly (spec 4.5). */
export const INTROSPECTION_AUTH_METHODS: readonly ClientAuthMethod[] = ["client_secret_basic", "private_key_jwt"];

/**
 * The protocol's own scopes (spec 2.1), and `roles`: the user's API roles in the ID token and
 * userinfo. Any other value must be a scope of an API (lib/oauth/resources.ts) or is `invalid_scope`.
 */
export const SCOPES = ["openid", "profile", "email", "phone", "address", "offline_access", "roles"] as const;
export type Scope = (typeof SCOPES)[number];

const PROTOCOL_SCOPES: ReadonlySet<string> = new Set(SCOPES);

/** Whether a scope is one of the protocol's own (OpenID Connect), not an API's. */
export function isProtocolScope(scope: string): boolean {
  return PROTOCOL_SCOPES.has(scope);
}
/** Scopes whose claims stay out of an ID token issued together with an access token (spec 2.1). */
export const USER_CLAIM_SCOPES = ["profile", "email", "phone", "address"] as const;

/** RFC 8693 3 token type identifiers, and Torii's own for a bare user id (spec 2.2). */
export const TOKEN_TYPE = {
  accessToken: "urn:ietf:params:oauth:token-type:access_token",
  refreshToken: "urn:ietf:params:oauth:token-type:refresh_token",
  idToken: "urn:ietf:params:oauth:token-type:id_token",
  jwt: "urn:ietf:params:oauth:token-type:jwt",
  userId: "urn:torii:params:oauth:token-type:user_id",
} as const;

/** Access token formats a client can be registered for. */
export const ACCESS_TOKEN_FORMATS = ["jwt", "opaque"] as const;
export type AccessTokenFormat = (typeof ACCESS_TOKEN_FORMATS)[number];
