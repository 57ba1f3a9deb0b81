import { CLIENT_AUTH_METHODS } from "@/lib/protocol/vocabulary";
import { recordAudit } from "@/lib/store/audit";
import { getGrant } from "@/lib/store/grants";
import { findTokenByValue, getRefreshFamily, markRotated, revokeFamily, type StoredToken } from "@/lib/store/tokens";
import { getUser } from "@/lib/store/users";
import { InvalidGrant } from "../errors";
import { parseParams } from "../params/parse";
import { GRANT, refreshTokenParams } from "../params/token";
import { narrowScopes, parseScope } from "../scopes";
import { issueUserTokens } from "./issue";
import type { Grant, GrantRequest } from "./types";

const INVALID = "The refresh token is invalid, expired, revoked or was issued to another client.";

/**
 * RFC 6749 6 with rotation (OAuth 2.0 Security BCP 4.14.2): every use returns a successor and
 * retires the presented token; presenting a retired one again means it leaked, so the whole
 * family and its access tokens are revoked.
 */
export const refreshTokenGrant: Grant = {
  type: GRANT.refreshToken,
  clientAuth: CLIENT_AUTH_METHODS,
  async handle(g) {
    const p = parseParams(refreshTokenParams, g.form);
    const client = g.client!;
    const t = await findTokenByValue(g.db, p.refresh_token);
    if (!t || t.kind !== "refresh" || !t.familyId) throw new InvalidGrant(INVALID);
    if (t.clientId !== client.id) throw new InvalidGrant(INVALID);
    if (t.rotatedAt) return reuse(g, t);
    const family = await getRefreshFamily(g.db, t.familyId);
    const now = new Date();
    if (!family || family.revokedAt || t.revokedAt || t.expiresAt <= now) throw new InvalidGrant(INVALID);
    const grant = await getGrant(g.db, t.grantId);
    if (!grant || grant.revokedAt) throw new InvalidGrant(INVALID);
    const scopes = narrowScopes(parseScope(p.scope), family.scopes);
    const user = t.userId ? await getUser(g.db, t.userId) : undefined;
    if (t.userId && (!user || user.locked)) throw new InvalidGrant("The user of this refresh token is no longer active.");
    if (!(await markRotated(g.db, t.id, now))) return reuse(g, t);

    // A family from a token exchange keeps its delegation (`act`) and audience on every refresh.
    const body = await issueUserTokens(g, {
      client,
      user: user ?? null,
      scopes,
      grantId: t.grantId,
      sessionId: family.sessionId,
      authTime: family.authTime,
      amr: family.amr,
      familyId: family.id,
      refreshScopes: family.scopes,
      forceRefresh: true,
      actor: family.actor,
      audience: t.audience,
      // The claims the authorization request asked for stay with the grant.
      idTokenClaims: grant.claims?.idToken,
    });
    await recordAudit(g.db, g.audit, {
      action: "token.refreshed",
      targetType: "refresh_family",
      targetId: family.id,
      clientId: client.id,
      details: { grantId: t.grantId, scopes },
    });
    return body;
  },
};

async function reuse(g: GrantRequest, t: StoredToken): Promise<never> {
  await revokeFamily(g.db, t.familyId!, "refresh_reuse");
  await recordAudit(g.db, g.audit, {
    action: "refresh_family.revoked",
    targetType: "refresh_family",
    targetId: t.familyId,
    clientId: t.clientId,
    details: { reason: "refresh_reuse", grantId: t.grantId },
  });
  throw new InvalidGrant("The refresh token was already used; its family of tokens is revoked.");
}
