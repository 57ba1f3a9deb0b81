import { SECRET_AUTH_METHODS } from "@/lib/protocol/vocabulary";
import { parseParams } from "../params/parse";
import { clientCredentialsParams, GRANT } from "../params/token";
import { resolveTarget, resourcesOf } from "../resources";
import { parseScopeTokens, scopeString } from "../scopes";
import { apiTokenContext, issueAccessToken, issueEnvOf } from "../tokens";
import type { Grant } from "./types";

/**
 * RFC 6749 4.4: the client is the subject; no ID token and no refresh token (4.4.3), so
 * `offline_access` is dropped from what is granted. The hot path: nothing is written, whatever
 * the access token's format (a JWT is signed, an opaque token sealed; lib/oauth/tokens.ts).
 */
export const clientCredentialsGrant: Grant = {
  type: GRANT.clientCredentials,
  clientAuth: SECRET_AUTH_METHODS,
  async handle(g) {
    const p = parseParams(clientCredentialsParams, g.form);
    const client = g.client!;
    // RFC 8707: for an API, the client's registered scopes there are all it may have.
    const { target, protocolScopes } = resolveTarget(await g.store.apis.list(), client, resourcesOf(g.form), parseScopeTokens(p.scope), { allByDefault: true });
    const scopes = [...protocolScopes.filter((s) => s !== "offline_access"), ...(target?.scopes ?? [])];
    const api = target ? apiTokenContext(target, await g.store.roles.for({ clientId: client.id }, target.api.id)) : {};
    const env = { ...(await issueEnvOf(g.store, g.issuer, g.settings)), client, scopes, ...api };
    const at = await issueAccessToken({ ...env, grantId: null });
    return { access_token: at.token, token_type: "Bearer", expires_in: at.expiresIn, scope: scopeString(scopes) };
  },
};
