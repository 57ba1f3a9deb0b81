import { pageOverrides } from "@/lib/i18n/overrides";
import { activityDue } from "@/lib/session/activity";
import type { Engine } from "@/lib/engine";
import type { AuthRequest, NewAuthRequest } from "@/lib/store/auth-requests";
import type { Client } from "@/lib/store/clients";
import type { Redemption } from "@/lib/store/codes";
import type { SessionWithUser } from "@/lib/store/sessions";
import type { Settings } from "@/lib/store/settings";
import { subjectAllowed } from "./claims-request";
import { InvalidRequest, LoginRequired } from "@/lib/protocol/errors";
import { deliverAuthorizationResponse } from "./response-modes";
import { scopeString } from "./scopes";
import { accessTokenScopes, tokenTarget } from "./resources";
import { apiTokenContext, issueAccessToken, issueIdToken } from "./tokens";

/**
 * Answers a pending authorization request for a session: a single-use code (code flow) or the
 * tokens (implicit flow), delivered in the request's response mode. One atomic write (one
 * statement, or a transaction when a replayed callback lost the race: Store.atomically) consumes the
 * request and writes the grant, the code or tokens and the audit event, so a replayed callback
 * cannot mint a second code, and a failure half-way leaves the request pending, not half-answered.
 */
export async function completeAuthorization(
  inst: Engine,
  /** Null for a request answered at once, which was never stored (unstoredAuthRequest). */
  authRequestId: string | null,
  req: AuthRequest,
  client: Client,
  session: SessionWithUser,
  settings: Settings,
): Promise<Response> {
  const ctx = {
    redirectUri: req.redirectUri,
    mode: req.responseMode as "query" | "fragment" | "form_post",
    lang: req.locale,
    theme: settings.branding,
    texts: req.responseMode === "form_post" ? await pageOverrides(inst, req.locale) : undefined,
  };
  // The session was read live, with its whole user unlocked (liveSessions): what the tokens
  // issued here carry, and what the code's redemption will be answered from.
  const user = session.user;
  if (user.locked) throw new LoginRequired("The user can no longer sign in.");
  // OIDC Core 5.5.1: a request for a specific sub is never answered with another user's tokens.
  if (!subjectAllowed(req.claims, user.id)) throw new LoginRequired("The signed-in user is not the subject the request asked for.");
  // Read from the engine's caches before the write (grants/transaction.ts says why).
  const signingKey = req.responseType === "code" ? undefined : await inst.store.keys.signing();
  // The implicit flow's access token is for the first API the request named (RFC 8707), if any.
  const target = req.responseType === "id_token token" ? tokenTarget(await inst.store.apis.list(), client, req, []) : null;
  const apiContext = target ? apiTokenContext(target, await inst.store.roles.for({ userId: user.id }, target.api.id)) : {};

  // The code's redemption as its own read would find it, remembered once this write commits.
  let issued: { code: string; read: Redemption } | undefined;
  const response = await inst.store.atomically(async (tx) => {
    issued = undefined;
    if (authRequestId !== null && !(await tx.authRequests.complete(authRequestId))) throw new InvalidRequest("This authorization request was already answered.");
    if (activityDue(session.lastActiveAt, settings.lifetimes, tx.clock.now())) await tx.sessions.touch(session.id, settings.lifetimes);
    const grantType = req.responseType === "code" ? "authorization_code" : "implicit";
    const granted = {
      scopes: req.scopes,
      resources: req.resources,
      claims: req.claims ? { idToken: req.claims.idToken, userinfo: req.claims.userinfo } : null,
    };
    const grant = await tx.grants.create({
      clientId: client.id,
      userId: user.id,
      sessionId: session.id,
      grantType,
      ...granted,
      expiresAt: new Date(tx.clock.now() + Math.max(client.refreshTokenLifetime, client.accessTokenLifetime) * 1000),
    });
    await tx.audit.record(
      { type: "user", id: user.id },
      { action: "oauth.authorized", targetType: "grant", targetId: grant.id, clientId: client.id, details: { responseType: req.responseType, scopes: req.scopes, sessionId: session.id } },
    );

    if (req.responseType === "code") {
      const { code, stored } = await tx.codes.create({
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
      issued = { code, read: { code: stored, grant: { id: grant.id, ...granted, revokedAt: null }, user, sessionEnded: false } };
      return deliverAuthorizationResponse(ctx, { code, state: req.state ?? undefined });
    }

    const tokenCtx = {
      repos: tx,
      issuer: inst.issuer,
      signingKey: signingKey!,
      sealer: inst.store.keys.sealer,
      primaryDomain: settings.primaryDomain,
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
      const atScopes = accessTokenScopes(req.scopes, target);
      const at = await issueAccessToken({ ...tokenCtx, ...apiContext, scopes: atScopes });
      const idToken = await issueIdToken({ ...tokenCtx, accessToken: at.token, withAccessToken: true });
      return deliverAuthorizationResponse(ctx, {
        access_token: at.token,
        token_type: "Bearer",
        expires_in: String(at.expiresIn),
        scope: scopeString(atScopes),
        id_token: idToken,
        state: req.state ?? undefined,
      });
    }
    const idToken = await issueIdToken({ ...tokenCtx, withAccessToken: false });
    return deliverAuthorizationResponse(ctx, { id_token: idToken, state: req.state ?? undefined });
  });
  if (issued) inst.store.codeRedemptions.remember(issued.code, issued.read);
  return response;
}

/**
 * The request as it would be stored, for one the authorization endpoint answers at once (a live
 * session, nothing to ask). No page comes back for it, so it is never stored, and there is no
 * callback that could replay it (lib/oauth/authorize.ts): two statements fewer on the commonest
 * path of a signed-in user.
 */
export function unstoredAuthRequest(data: NewAuthRequest, now: Date): AuthRequest {
  return {
    idHash: "",
    userAgentId: data.userAgentId,
    clientId: data.clientId,
    redirectUri: data.redirectUri,
    responseType: data.responseType,
    responseMode: data.responseMode,
    scopes: data.scopes,
    state: data.state ?? null,
    nonce: data.nonce ?? null,
    codeChallenge: data.codeChallenge ?? null,
    codeChallengeMethod: data.codeChallengeMethod ?? null,
    prompt: data.prompt ?? [],
    maxAge: data.maxAge ?? null,
    loginHint: data.loginHint ?? null,
    hintSubject: data.hintSubject ?? null,
    claims: data.claims ?? null,
    acrValues: data.acrValues ?? [],
    webauthnChallenge: null,
    resources: data.resources ?? [],
    locale: data.locale,
    loginName: data.loginName ?? null,
    sessionId: data.sessionId ?? null,
    formError: null,
    formValues: null,
    consentDenied: false,
    createdAt: now,
    expiresAt: now,
    completedAt: now,
  };
}
