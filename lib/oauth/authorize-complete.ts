import { pageOverrides } from "@/lib/i18n/overrides";
import type { Engine } from "@/lib/engine";
import { completeAuthRequest, type AuthRequest } from "@/lib/store/auth-requests";
import { recordAudit } from "@/lib/store/audit";
import type { Client } from "@/lib/store/clients";
import { createAuthorizationCode } from "@/lib/store/codes";
import { createGrant } from "@/lib/store/grants";
import { touchSession, type SessionWithUser } from "@/lib/store/sessions";
import type { Settings } from "@/lib/store/settings";
import { getUser } from "@/lib/store/users";
import { subjectAllowed } from "./claims-request";
import { InvalidRequest, LoginRequired } from "./errors";
import { deliverAuthorizationResponse } from "./response-modes";
import { scopeString } from "./scopes";
import { issueAccessToken, issueIdToken } from "./tokens";

/**
 * Answers a pending authorization request for a session: a single-use code (code flow) or the
 * tokens (implicit flow), delivered in the request's response mode. The request is consumed
 * first, so a replayed callback cannot mint a second code.
 */
export async function completeAuthorization(
  inst: Engine,
  authRequestId: string,
  req: AuthRequest,
  client: Client,
  session: SessionWithUser,
  settings: Settings,
): Promise<Response> {
  const { db } = inst;
  const ctx = {
    redirectUri: req.redirectUri,
    mode: req.responseMode as "query" | "fragment" | "form_post",
    lang: req.locale,
    theme: settings.branding,
    texts: req.responseMode === "form_post" ? await pageOverrides(inst, req.locale) : undefined,
  };
  if (!(await completeAuthRequest(db, authRequestId))) throw new InvalidRequest("This authorization request was already answered.");
  const user = await getUser(db, session.userId);
  if (!user || user.locked) throw new LoginRequired("The user can no longer sign in.");
  // OIDC Core 5.5.1: a request for a specific sub is never answered with another user's tokens.
  if (!subjectAllowed(req.claims, user.id)) throw new LoginRequired("The signed-in user is not the subject the request asked for.");
  await touchSession(db, session.id, settings.lifetimes);

  const grantType = req.responseType === "code" ? "authorization_code" : "implicit";
  const grant = await createGrant(db, {
    clientId: client.id,
    userId: user.id,
    sessionId: session.id,
    grantType,
    scopes: req.scopes,
    claims: req.claims ? { idToken: req.claims.idToken, userinfo: req.claims.userinfo } : null,
    expiresAt: new Date(Date.now() + Math.max(client.refreshTokenLifetime, client.accessTokenLifetime) * 1000),
  });
  await recordAudit(
    db,
    { type: "user", id: user.id },
    { action: "oauth.authorized", targetType: "grant", targetId: grant.id, clientId: client.id, details: { responseType: req.responseType, scopes: req.scopes, sessionId: session.id } },
  );

  if (req.responseType === "code") {
    const code = await createAuthorizationCode(db, {
      grantId: grant.id,
      clientId: client.id,
      userId: user.id,
      sessionId: session.id,
      redirectUri: req.redirectUri,
      scopes: req.scopes,
      nonce: req.nonce,
      codeChallenge: req.codeChallenge,
      codeChallengeMethod: req.codeChallengeMethod,
      authTime: session.authTime,
      amr: session.amr,
      lifetimeSeconds: settings.lifetimes.authCode,
    });
    return deliverAuthorizationResponse(ctx, { code, state: req.state ?? undefined });
  }

  const tokenCtx = {
    db,
    masterKey: inst.masterKey,
    issuer: inst.issuer,
    caches: inst.caches,
    client,
    user,
    scopes: req.scopes,
    sessionId: session.id,
    grantId: grant.id,
    nonce: req.nonce,
    authTime: session.authTime,
    amr: session.amr,
    idTokenClaims: req.claims?.idToken,
  };
  if (req.responseType === "id_token token") {
    const at = await issueAccessToken(tokenCtx);
    const idToken = await issueIdToken({ ...tokenCtx, accessToken: at.token, withAccessToken: true });
    return deliverAuthorizationResponse(ctx, {
      access_token: at.token,
      token_type: "Bearer",
      expires_in: String(at.expiresIn),
      scope: scopeString(req.scopes),
      id_token: idToken,
      state: req.state ?? undefined,
    });
  }
  const idToken = await issueIdToken({ ...tokenCtx, withAccessToken: false });
  return deliverAuthorizationResponse(ctx, { id_token: idToken, state: req.state ?? undefined });
}
