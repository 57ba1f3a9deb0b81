import { dateOf } from "@/lib/clock";
import { CLIENT_AUTH_METHODS } from "@/lib/protocol/vocabulary";
import type { RefreshToken, RefreshTokenFamily, RefreshTokenGrant, TokenWithGrant } from "@/lib/store/tokens";
import type { User } from "@/lib/store/users";
import { InvalidGrant } from "@/lib/protocol/errors";
import { parseParams } from "../params/parse";
import { GRANT, refreshTokenParams } from "../params/token";
import type { Api } from "@/lib/store/apis";
import { resourcesOf, tokenTarget } from "../resources";
import { narrowScopes, parseScopeTokens } from "../scopes";
import type { IssuedRefreshToken } from "../tokens";
import { issueUserTokens } from "./issue";
import { refreshReuseIntervalSeconds, successorValue } from "./refresh-successor";
import { CommittedRefusal, grantTransaction, type IssueEnv } from "./transaction";
import type { Grant, GrantRequest, TokenResponse } from "./types";

const INVALID = "The refresh token is invalid, expired, revoked or was issued to another client.";

/** The presented token, the scope asked for, and the resource (RFC 8707: another API of the grant). */
type Presented = { value: string; scope: string | undefined; resources: string[]; apis: Api[] };

/**
 * RFC 6749 6 with rotation (OAuth 2.0 Security BCP 4.14.2): every use returns a successor and
 * retires the presented token; presenting a retired one again means it leaked, so the whole
 * family and its access tokens are revoked, unless it comes back within the instance's reuse
 * interval (refresh-successor.ts), which answers with the same successor instead.
 *
 * One transaction for the rotation, the successor, the access token and (for a family's first
 * refresh, or one from another address) the audit event: a failure half-way leaves the presented
 * token unrotated, so the client's retry works instead of being taken for reuse.
 */
export const refreshTokenGrant: Grant = {
  type: GRANT.refreshToken,
  clientAuth: CLIENT_AUTH_METHODS,
  async handle(g) {
    const p = parseParams(refreshTokenParams, g.form);
    const presented: Presented = { value: p.refresh_token, scope: p.scope, resources: resourcesOf(g.form), apis: await g.store.apis.list() };
    const client = g.client!;
    // What the successor's own rotation will read, when this one commits (remembered below).
    let successor: TokenWithGrant | undefined;
    const body = await grantTransaction(g, async (env) => {
      successor = undefined;
      // The token, its family, grant and user in one read; none for a successor this instance
      // issued (taken once: a second run of this function, in a transaction, reads). The guard
      // below checks against the database whatever of it can have changed since.
      const remembered = await g.store.issuedRefreshTokens.take(presented.value);
      const found = remembered ?? (await env.repos.tokens.findWithGrant(presented.value));
      const t = found?.token;
      if (!found || !t || t.kind !== "refresh" || !t.familyId) throw new InvalidGrant(INVALID);
      if (t.clientId !== client.id) throw new InvalidGrant(INVALID);
      const now = dateOf(env.repos.clock);
      if (t.rotatedAt) return presentedAgain(g, env, t, presented, now);
      if (t.revokedAt || t.expiresAt <= now) throw new InvalidGrant(INVALID);
      const { family, grant, user } = liveFamily(found);
      const scopes = narrowScopes(parseScopeTokens(presented.scope), family.scopes);
      // Concurrent uses of one token meet here: one rotates, the others see it rotated (or revoked).
      // A remembered user must still be the user as it is (markRotatedWrite, `userVersion`).
      const rotation = { id: t.id, value: presented.value, userVersion: (remembered && user?.updatedAt) || null };
      if (!(await env.repos.tokens.markRotated(rotation, now))) return presentedAgain(g, env, (await env.repos.tokens.findByValue(presented.value))!, presented, now);

      // Audited when the family is refreshed for the first time or from another address than its
      // last refresh: where a refresh token is used is what tells a stolen one apart. A rotation
      // from where the family was last used is in the tokens themselves (the presented one's
      // rotated_at, the successor's created_at) and is not repeated in the audit log, where it
      // would be most of the events (one per client per access token lifetime) and a write of an
      // event row and five index entries on every refresh.
      const ip = g.audit.ip ?? null;
      const moved = ip === null || ip !== family.lastRefreshIp;
      const body = await issueFrom(env, g, t, family, grant, user, scopes, presented, {
        refreshTokenValue: successorValue(g.masterKey, presented.value),
        onRefreshToken: ({ stored }) => {
          successor = { token: stored, family: { ...family, lastRefreshIp: ip }, grant, user: found.user };
        },
      });
      if (moved) {
        await env.repos.tokens.noteRefreshIp(family.id, ip);
        await env.repos.audit.record(g.audit, {
          action: "token.refreshed",
          targetType: "refresh_family",
          targetId: family.id,
          clientId: client.id,
          details: { grantId: t.grantId, scopes, previousIp: family.lastRefreshIp },
        });
      }
      return body;
    });
    if (successor && body.refresh_token) g.store.issuedRefreshTokens.remember(body.refresh_token, successor);
    return body;
  },
};

/** The token's family, grant and user, when all are still live; `invalid_grant` otherwise. */
function liveFamily({ token: t, family, grant, user }: TokenWithGrant): { family: RefreshTokenFamily; grant: RefreshTokenGrant; user: User | null } {
  if (!family || family.revokedAt) throw new InvalidGrant(INVALID);
  if (!grant || grant.revokedAt) throw new InvalidGrant(INVALID);
  if (t.userId && (!user || user.locked)) throw new InvalidGrant("The user of this refresh token is no longer active.");
  return { family, grant, user: user ?? null };
}

/**
 * A family from a token exchange keeps its delegation (`act`) and audience on every refresh. A
 * grant that covers APIs gives an access token for the one asked for (or its first), with the
 * scopes asked for now that are that API's, and the subject's roles there as they are now.
 */
async function issueFrom(
  env: IssueEnv,
  g: GrantRequest,
  t: RefreshToken,
  family: RefreshTokenFamily,
  grant: RefreshTokenGrant,
  user: User | null,
  scopes: string[],
  presented: Presented,
  refresh: { refreshTokenValue?: string; existingRefreshToken?: string; onRefreshToken?: (issued: IssuedRefreshToken) => void },
): Promise<TokenResponse> {
  const api = tokenTarget(presented.apis, g.client!, { resources: grant.resources, scopes }, presented.resources);
  const holder = user ? { userId: user.id } : { clientId: g.client!.id };
  return issueUserTokens(env, {
    client: g.client!,
    user,
    scopes,
    grantId: t.grantId,
    sessionId: family.sessionId,
    authTime: family.authTime,
    amr: family.amr,
    familyId: family.id,
    refreshScopes: family.scopes,
    forceRefresh: true,
    // The claims the authorization request asked for stay with the grant (OIDC Core 5.5).
    idTokenClaims: grant.claims?.idToken,
    actor: family.actor,
    notAfter: family.notAfter ? Math.floor(family.notAfter.getTime() / 1000) : null,
    audience: t.audience,
    target: api && { api, roles: await env.repos.roles.for(holder, api.api.id) },
    ...refresh,
  });
}

/** A stored refresh token that is neither revoked nor expired. */
function isStoredTokenActive(t: RefreshToken, now: Date): boolean {
  return !t.revokedAt && t.expiresAt > now;
}

/**
 * A rotated token presented again. Within the reuse interval after its rotation, and while its
 * successor is unused and the family live, the answer is that same successor with a fresh access
 * (and ID) token. Anything else is reuse: the family is revoked, and that revocation commits.
 */
async function presentedAgain(g: GrantRequest, env: IssueEnv, t: RefreshToken, presented: Presented, now: Date): Promise<TokenResponse | CommittedRefusal> {
  const interval = refreshReuseIntervalSeconds(g.settings);
  if (interval > 0 && t.rotatedAt && !t.revokedAt && now.getTime() - t.rotatedAt.getTime() <= interval * 1000) {
    const value = successorValue(g.masterKey, presented.value);
    const found = await env.repos.tokens.findWithGrant(value);
    const successor = found?.token;
    if (found && successor && successor.familyId === t.familyId && !successor.rotatedAt && isStoredTokenActive(successor, now)) {
      const { family, grant, user } = liveFamily(found);
      const scopes = narrowScopes(parseScopeTokens(presented.scope), family.scopes);
      const body = await issueFrom(env, g, successor, family, grant, user, scopes, presented, { existingRefreshToken: value });
      await env.repos.audit.record(g.audit, {
        action: "token.refreshed",
        targetType: "refresh_family",
        targetId: family.id,
        clientId: t.clientId,
        details: { grantId: t.grantId, scopes, withinReuseInterval: true },
      });
      return body;
    }
  }
  await env.repos.tokens.revokeFamily(t.familyId!, "refresh_reuse");
  await env.repos.audit.record(g.audit, {
    action: "refresh_family.revoked",
    targetType: "refresh_family",
    targetId: t.familyId,
    clientId: t.clientId,
    details: { reason: "refresh_reuse", grantId: t.grantId },
  });
  return new CommittedRefusal(new InvalidGrant("The refresh token was already used; its family of tokens is revoked."));
}
