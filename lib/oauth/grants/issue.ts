import type { Client } from "@/lib/store/clients";
import type { User } from "@/lib/store/users";
import { accessTokenScopes, type Target } from "../resources";
import { scopeString } from "../scopes";
import { apiTokenContext, issueAccessToken, issueIdToken, issueRefreshToken, wantsRefreshToken, type IssuedRefreshToken, type IssueEnv, type TokenContext } from "../tokens";
import type { TokenResponse } from "./types";

/**
 * The common tail of the grants that issue a token set: an access token, an ID token when
 * `openid` was granted and there is a user (with `at_hash`, and without user claims since an
 * access token goes along), and a refresh token for `offline_access` (a new family, or the next
 * member of `familyId`). `actor` and `audience` carry a token exchange's delegation through
 * refreshes. Everything is written with `env.repos`, the grant's transaction.
 */
export async function issueUserTokens(
  env: IssueEnv,
  t: {
    client: Client;
    user: User | null;
    scopes: string[];
    /** Null for tokens that belong to no grant (jwt-bearer): nothing was authorized by a user. */
    grantId: string | null;
    sessionId: string | null;
    nonce?: string | null;
    authTime?: Date | null;
    amr?: string[];
    familyId?: string | null;
    /** Scopes the refresh token keeps (the original grant's), when narrower ones were asked for now. */
    refreshScopes?: string[];
    forceRefresh?: boolean;
    /** The refresh token's value when the caller derived it (a rotation's successor). */
    refreshTokenValue?: string;
    /** A refresh token that already exists and goes out again instead of a new one (refresh reuse interval). */
    existingRefreshToken?: string;
    actor?: Record<string, unknown> | null;
    /** Nothing issued is valid after this (seconds since the epoch; TokenContext `notAfter`). */
    notAfter?: number | null;
    audience?: string[];
    /** User claims the authorization request asked for by name for the ID token (OIDC Core 5.5). */
    idTokenClaims?: readonly string[] | null;
    /**
     * The API the access token is for (RFC 8707; resources.ts tokenTarget) and the subject's roles
     * there. Only the access token changes: the ID token is the client's, and the refresh token
     * keeps the whole grant so that it can be exchanged for another of its APIs later.
     */
    target?: { api: Target; roles: readonly string[] } | null;
    /** Told of a new refresh token (the code and refresh grants remember what its own refresh will read). */
    onRefreshToken?: (issued: IssuedRefreshToken) => void;
  },
): Promise<TokenResponse> {
  const ctx: TokenContext = {
    ...env,
    client: t.client,
    user: t.user,
    scopes: t.scopes,
    grantId: t.grantId,
    sessionId: t.sessionId,
    nonce: t.nonce,
    authTime: t.authTime,
    amr: t.amr,
    familyId: t.familyId,
    actor: t.actor,
    notAfter: t.notAfter,
    audience: t.audience,
    idTokenClaims: t.idTokenClaims,
  };
  const atScopes = accessTokenScopes(t.scopes, t.target?.api ?? null);
  const at = await issueAccessToken(t.target ? { ...ctx, ...apiTokenContext(t.target.api, t.target.roles), scopes: atScopes } : ctx);
  const body: TokenResponse = {
    access_token: at.token,
    token_type: "Bearer",
    expires_in: at.expiresIn,
    scope: scopeString(atScopes),
  };
  if (t.user && t.scopes.includes("openid")) body.id_token = await issueIdToken({ ...ctx, accessToken: at.token, withAccessToken: true });
  const refreshScopes = t.refreshScopes ?? t.scopes;
  if (t.existingRefreshToken) body.refresh_token = t.existingRefreshToken;
  else if (t.forceRefresh || wantsRefreshToken(t.client, refreshScopes)) {
    const rt = await issueRefreshToken({ ...ctx, scopes: refreshScopes }, t.refreshTokenValue);
    body.refresh_token = rt.token;
    t.onRefreshToken?.(rt);
  }
  return body;
}
