import { recordAudit } from "@/lib/store/audit";
import { createGrant } from "@/lib/store/grants";
import { parseParams } from "../params/parse";
import { clientCredentialsParams, GRANT } from "../params/token";
import { parseScope, scopeString } from "../scopes";
import { issueAccessToken } from "../tokens";
import type { Grant } from "./types";

/**
 * RFC 6749 4.4: the client is the subject; no ID token and no refresh token (4.4.3), so
 * `offline_access` is dropped from what is granted. The hot path: with JWT access tokens nothing
 * is written; an opaque token needs its row (and a grant to hang it on).
 */
export const clientCredentialsGrant: Grant = {
  type: GRANT.clientCredentials,
  clientAuth: ["client_secret_basic", "client_secret_post"],
  async handle(g) {
    const p = parseParams(clientCredentialsParams, g.form);
    const client = g.client!;
    const scopes = parseScope(p.scope).filter((s) => s !== "offline_access");
    if (client.accessTokenType !== "opaque") {
      const at = await issueAccessToken({ db: g.db, masterKey: g.masterKey, issuer: g.issuer, client, scopes, grantId: null });
      return { access_token: at.token, token_type: "Bearer", expires_in: at.expiresIn, scope: scopeString(scopes) };
    }
    // One transaction for the grant, its token and the audit event: one commit instead of three,
    // and never a grant without its token.
    const at = await g.db.transaction(async (tx) => {
      const grant = await createGrant(tx, {
        clientId: client.id,
        userId: null,
        sessionId: null,
        grantType: GRANT.clientCredentials,
        scopes,
        expiresAt: new Date(Date.now() + client.accessTokenLifetime * 1000),
      });
      const issued = await issueAccessToken({ db: tx, masterKey: g.masterKey, issuer: g.issuer, client, scopes, grantId: grant.id });
      await recordAudit(tx, g.audit, {
        action: "token.issued",
        targetType: "grant",
        targetId: grant.id,
        clientId: client.id,
        details: { grantType: GRANT.clientCredentials, scopes },
      });
      return issued;
    });
    return { access_token: at.token, token_type: "Bearer", expires_in: at.expiresIn, scope: scopeString(scopes) };
  },
};
