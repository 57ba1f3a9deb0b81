import { dateOf } from "@/lib/clock";
import { CLIENT_AUTH_METHODS } from "@/lib/protocol/vocabulary";
import { constantTimeEqual, sha256 } from "@/lib/crypto";
import type { AuthorizationCode } from "@/lib/store/codes";
import type { Repositories } from "@/lib/store/repositories";
import type { TokenWithGrant } from "@/lib/store/tokens";
import { InvalidGrant } from "@/lib/protocol/errors";
import { parseParams } from "../params/parse";
import { authorizationCodeParams, CODE_VERIFIER, GRANT } from "../params/token";
import { resourcesOf, tokenTarget } from "../resources";
import { issueUserTokens } from "./issue";
import { CommittedRefusal, grantTransaction } from "./transaction";
import type { Grant, GrantRequest } from "./types";

const INVALID = "The authorization code is invalid, expired or was issued to another client.";

/** RFC 6749 4.1.3 and RFC 7636 4.5-4.6. */
export const authorizationCodeGrant: Grant = {
  type: GRANT.authorizationCode,
  clientAuth: CLIENT_AUTH_METHODS,
  async handle(g) {
    const p = parseParams(authorizationCodeParams, g.form);
    const client = g.client!;
    const apis = await g.store.apis.list();
    // What the refresh token's first rotation will read, when this redemption commits (remembered below).
    let first: TokenWithGrant | undefined;
    // One transaction: the code marked used, the refresh family and tokens and the audit event
    // commit together. Concurrent redemptions meet at markCodeUsed, which exactly one wins.
    const body = await grantTransaction(g, async (env) => {
      first = undefined;
      const tx = env.repos;
      // The code, its grant, its user and its session in one read; none for a code this instance
      // issued (taken once: a second run of this function, in a transaction, reads). Marking the
      // code used checks against the database whatever of it can have changed since.
      const remembered = await g.store.codeRedemptions.take(p.code);
      const found = remembered ?? (await tx.codes.findForRedemption(p.code));
      if (!found) throw new InvalidGrant(INVALID);
      const { code, grant, user } = found;
      // RFC 6749 4.1.2: a code used twice is denied, and what it produced is revoked (whoever replays it).
      if (code.usedAt) return replay(tx, g, code);
      if (code.clientId !== client.id) throw new InvalidGrant(INVALID);
      if (code.expiresAt <= dateOf(tx.clock)) throw new InvalidGrant(INVALID);
      if (code.redirectUri !== p.redirect_uri) throw new InvalidGrant("redirect_uri does not match the authorization request.");
      verifyPkce(code, p.code_verifier, client.authMethod === "none");

      if (!grant || grant.revokedAt) throw new InvalidGrant(INVALID);
      if (!user || user.locked) throw new InvalidGrant("The user of this authorization code is no longer active.");
      if (found.sessionEnded) throw new InvalidGrant("The session of this authorization code has ended.");
      // RFC 8707 2.2: the resource asked for here must be one the authorization request named.
      const api = tokenTarget(apis, client, grant, resourcesOf(g.form));
      // A remembered user must still be the user as it is (markCodeUsedWrite, `userVersion`).
      if (!(await tx.codes.markUsed({ codeHash: code.codeHash, userVersion: remembered ? user.updatedAt : null }))) return lostGuard(tx, g, p.code);

      const body = await issueUserTokens(env, {
        client,
        user,
        scopes: code.scopes,
        grantId: code.grantId,
        sessionId: code.sessionId,
        nonce: code.nonce,
        authTime: code.authTime,
        amr: code.amr,
        idTokenClaims: grant.claims?.idToken,
        target: api && { api, roles: await tx.roles.for({ userId: user.id }, api.api.id) },
        onRefreshToken: ({ stored, newFamily }) => {
          if (newFamily) first = { token: stored, family: newFamily, grant, user };
        },
      });
      await tx.audit.record({ ...g.audit }, {
        action: "token.issued",
        targetType: "grant",
        targetId: code.grantId,
        clientId: client.id,
        details: { grantType: GRANT.authorizationCode, userId: user.id, scopes: code.scopes, refreshToken: Boolean(body.refresh_token) },
      });
      return body;
    });
    if (first && body.refresh_token) g.store.issuedRefreshTokens.remember(body.refresh_token, first);
    return body;
  },
};

/**
 * Marking the code used lost (in a transaction: the batched first try only ever loses as a
 * whole). A concurrent redemption got there first, which is a replay; otherwise something it
 * checks changed after the read (the grant revoked, the session ended, the user locked).
 */
async function lostGuard(tx: Repositories, g: GrantRequest, presented: string): Promise<CommittedRefusal> {
  const again = await tx.codes.findForRedemption(presented);
  if (again?.code.usedAt) return replay(tx, g, again.code);
  throw new InvalidGrant(INVALID);
}

/** The revocation commits; the refusal is thrown after it. */
async function replay(tx: Repositories, g: GrantRequest, code: AuthorizationCode): Promise<CommittedRefusal> {
  await tx.grants.revoke(code.grantId, "code_replay", dateOf(tx.clock));
  await tx.audit.record(g.audit, {
    action: "grant.revoked",
    targetType: "grant",
    targetId: code.grantId,
    clientId: code.clientId,
    details: { reason: "code_replay", presentedBy: g.client?.id ?? null },
  });
  return new CommittedRefusal(new InvalidGrant("The authorization code was already used; the tokens issued from it are revoked."));
}

/**
 * RFC 7636 4.6 (S256 only). A public client must have used PKCE; a verifier without a stored
 * challenge is refused too, so that PKCE cannot be stripped from one side of the exchange.
 */
function verifyPkce(code: AuthorizationCode, verifier: string | undefined, publicClient: boolean): void {
  if (!code.codeChallenge) {
    if (verifier !== undefined) throw new InvalidGrant("code_verifier was sent, but the authorization request had no code_challenge.");
    if (publicClient) throw new InvalidGrant("A public client must use PKCE.");
    return;
  }
  if (verifier === undefined) throw new InvalidGrant("code_verifier is missing.");
  if (!CODE_VERIFIER.test(verifier)) throw new InvalidGrant("code_verifier is malformed.");
  if (code.codeChallengeMethod !== "S256") throw new InvalidGrant("Only the S256 code challenge method is supported.");
  // RFC 7636 4.6: BASE64URL(SHA256(ASCII(verifier))); the verifier is ASCII (checked above), so its UTF-8 is the same.
  const computed = sha256(verifier);
  if (!constantTimeEqual(computed, code.codeChallenge)) throw new InvalidGrant("code_verifier does not match the code_challenge.");
}
