/** Every protocol path, exactly as in the specification; discovery and routing derive from here. */
export const PATHS = {
  discovery: "/.well-known/openid-configuration",
  /** RFC 8414 3: the same metadata, where OAuth 2.0 clients (not only OpenID ones) look for it. */
  authorizationServerMetadata: "/.well-known/oauth-authorization-server",
  authorize: "/oauth/v2/authorize",
  token: "/oauth/v2/token",
  introspect: "/oauth/v2/introspect",
  revoke: "/oauth/v2/revoke",
  keys: "/oauth/v2/keys",
  userinfo: "/oidc/v1/userinfo",
  endSession: "/oidc/v1/end_session",
} as const;

export function endpointUrl(issuer: string, name: keyof typeof PATHS): string {
  return issuer + PATHS[name];
}
