import { SECRET_AUTH_METHODS } from "@/lib/protocol/vocabulary";
import { recordAudit } from "@/lib/store/audit";
import { parseParams } from "../params/parse";
import { clientCredentialsParams, GRANT } from "../params/token";
import { parseScope, scopeString } from "../scopes";
import { issueAccessToken } from "../tokens";
import { grantForOpaque } from "./issue";
import type { Grant } from "./types";

/**
 * RFC 6749 4.4: the client is the subject; no ID token and no refresh token (4.4.3), so
 * `offline_access` is dropped from what is granted. The hot path: with JWT access tokens nothing
 * is written; an opaque token needs its row (and a grant to hang it on).
 */
export const clientCredentialsGrant: Grant = {
  type: GRANT.clientCredentials,
  clientAuth: SECRET_AUTH_METHODS,
  async handle(g) {
    const p = parseParams(clientCredentialsParams, g.form);
    const client = g.client!;
    const scopes = parseScope(p.scope).filter((s) => s !== "offline_access");
    const env = { masterKey: g.masterKey, issuer: g.issuer, caches: g.caches, client, scopes };
    // A JWT is written nowhere. An opaque token needs its grant: one transaction for the grant,
    // its token and the audit event, so one commit instead of three and never a grant alone.
    const at =
      client.accessTokenType !== "opaque"
        ? await issueAccessToken({ ...env, db: g.db, grantId: null })
        : await g.db.transaction(async (tx) => {
            const grantId = await grantForOpaque(tx, client, { userId: null, grantType: GRANT.clientCredentials, scopes });
            const issued = await issueAccessToken({ ...env, db: tx, grantId });
            await recordAudit(tx, g.audit, {
              action: "token.issued",
              targetType: "grant",
              targetId: grantId,
              clientId: client.id,
              details: { grantType: GRANT.clientCredentials, scopes },
            });
            return issued;
          });
    return { access_token: at.token, token_type: "Bearer", expires_in: at.expiresIn, scope: scopeString(scopes) };
  },
};
