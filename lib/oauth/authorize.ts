import { isInputDataError } from "@/lib/http/text-input";
import { BodyTooLarge, bodyTooLargeResponse } from "@/lib/http/body";
import { LOCALE_COOKIE, resolveLocale } from "@/lib/i18n/locales";
import { pageOverrides } from "@/lib/i18n/overrides";
import { instance, type Instance } from "@/lib/instance";
import { log } from "@/lib/log";
import { LOGIN_PATHS, loginUrl } from "@/lib/login/paths";
import { serializeCookie } from "@/lib/session/cookies";
import { ensureUserAgent, userAgentOfRequest } from "@/lib/session/user-agent";
import { createAuthRequest, findPendingAuthRequest, updateAuthRequest, type AuthRequest } from "@/lib/store/auth-requests";
import { getClient } from "@/lib/store/clients";
import { getLiveSession, liveSessions } from "@/lib/store/sessions";
import { getSettings, type Settings } from "@/lib/store/settings";
import { getUser } from "@/lib/store/users";
import { completeAuthorization } from "./authorize-complete";
import { decide, freshEnough } from "./authorize-decision";
import { authorizeErrorPage } from "./authorize-pages";
import { validateAuthorizeRequest } from "./authorize-request";
import { OAuthError, ServerError } from "./errors";
import { canonicalResponseType, readAuthorizeParams } from "./params/authorize";
import { deliverAuthorizationResponse, effectiveResponseMode } from "./response-modes";

function redirect(location: string, cookies: string[]): Response {
  const headers = new Headers({ Location: location, "Cache-Control": "no-store", "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'" });
  for (const c of cookies) headers.append("Set-Cookie", c);
  return new Response(null, { status: 302, headers });
}

/**
 * GET and POST /oauth/v2/authorize. The client and redirect URI are checked first and an error
 * there is shown on our own page (never a redirect to an untrusted URI); every later error goes
 * to the redirect URI with `state`, in the response mode that applies.
 */
export async function handleAuthorize(request: Request): Promise<Response> {
  let inst: Instance;
  let settings: Settings;
  try {
    inst = await instance();
    settings = await getSettings(inst.db);
  } catch (err) {
    log().error({ err }, "authorize: instance unavailable");
    return authorizeErrorPage({ status: 500, locale: "en", code: "serverError" });
  }
  const acceptLanguage = request.headers.get("accept-language");
  const raw = await readAuthorizeParams(request).catch((err) => (err instanceof BodyTooLarge ? err : { unsupportedBody: true as const }));
  if (raw instanceof BodyTooLarge) return bodyTooLargeResponse();
  if ("unsupportedBody" in raw) {
    const locale = resolveLocale({ acceptLanguage, defaultLocale: settings.defaultLocale });
    return authorizeErrorPage({ status: 400, locale, code: "badRequest", theme: settings.branding, texts: await pageOverrides(inst.db, locale) });
  }
  const v = raw.values;
  const locale = resolveLocale({ uiLocales: v.ui_locales, acceptLanguage, defaultLocale: settings.defaultLocale });
  const texts = await pageOverrides(inst.db, locale);
  const page = (code: string) => authorizeErrorPage({ status: 400, locale, code, theme: settings.branding, texts });

  if (raw.repeated.includes("client_id") || raw.repeated.includes("redirect_uri")) return page("repeatedClient");
  if (!v.client_id) return page("missingClientId");
  let client;
  try {
    client = v.client_id.length <= 200 ? await getClient(inst.db, v.client_id) : undefined;
  } catch (err) {
    // A client id the database refuses (lib/http/text-input.ts) names no client.
    if (!isInputDataError(err)) throw err;
    client = undefined;
  }
  if (!client) return page("unknownClient");
  if (!v.redirect_uri) return page("missingRedirectUri");
  if (!client.redirectUris.includes(v.redirect_uri)) return page("redirectUriMismatch");

  const redirectUri = v.redirect_uri;
  const mode = effectiveResponseMode(v.response_mode, v.response_type && canonicalResponseType(v.response_type));
  const respond = (params: Record<string, string | undefined>, cookies: string[] = []) =>
    withCookies(deliverAuthorizationResponse({ redirectUri, mode, lang: locale, theme: settings.branding, texts }, params), cookies);
  const fail = (err: OAuthError, cookies: string[] = []) =>
    respond({ error: err.error, error_description: err.description, state: v.state }, cookies);

  try {
    const req = await validateAuthorizeRequest(raw, client, { db: inst.db, masterKey: inst.masterKey, issuer: inst.config.issuer });
    const ua = await ensureUserAgent(inst.db, inst.config.issuer, request);
    const cookies = [
      ...(ua.setCookie ? [ua.setCookie] : []),
      serializeCookie(LOCALE_COOKIE, locale, { sameSite: "Lax", secure: inst.config.issuer.startsWith("https://") }),
    ];
    const now = new Date();
    const sessions = await liveSessions(inst.db, ua.id, now);
    const hintUser = req.hintSubject ? await getUser(inst.db, req.hintSubject) : undefined;
    const decision = decide({
      prompt: req.prompt,
      maxAge: req.maxAge,
      loginHint: req.loginHint,
      hintSubject: req.hintSubject,
      hintUsername: hintUser?.username ?? null,
      sessions,
      primaryDomain: settings.primaryDomain,
      now,
    });
    if (decision.kind === "error") return fail(decision.error, cookies);

    const { id, row } = await createAuthRequest(inst.db, {
      userAgentId: ua.id,
      clientId: client.id,
      redirectUri,
      responseType: req.responseType,
      responseMode: mode,
      scopes: req.scopes,
      state: req.state,
      nonce: req.nonce,
      codeChallenge: req.codeChallenge,
      codeChallengeMethod: req.codeChallengeMethod,
      prompt: req.prompt,
      maxAge: req.maxAge,
      loginHint: req.loginHint,
      hintSubject: req.hintSubject,
      locale,
      loginName: decision.kind === "password" || decision.kind === "loginName" ? decision.loginName : null,
    });
    switch (decision.kind) {
      case "complete":
        return withCookies(await completeAuthorization(inst, id, row, client, decision.session, settings), cookies);
      case "loginName":
        return redirect(loginUrl(LOGIN_PATHS.loginName, id), cookies);
      case "password":
        return redirect(loginUrl(LOGIN_PATHS.password, id), cookies);
      case "accounts":
        return redirect(loginUrl(LOGIN_PATHS.accounts, id), cookies);
      case "register":
        return redirect(loginUrl(LOGIN_PATHS.register, id), cookies);
    }
  } catch (err) {
    if (err instanceof OAuthError) return fail(err);
    log().error({ err }, "authorize failed");
    return fail(new ServerError("The server encountered an unexpected condition."));
  }
}

function withCookies(response: Response, cookies: string[]): Response {
  for (const c of cookies) response.headers.append("Set-Cookie", c);
  return response;
}

/**
 * GET /oauth/v2/authorize/callback?id=…: where the login pages send the browser once a session
 * has been chosen or created. It checks that session against the pending request once more and
 * answers the client.
 */
export async function handleAuthorizeCallback(request: Request): Promise<Response> {
  const inst = await instance();
  const settings = await getSettings(inst.db);
  const id = new URL(request.url).searchParams.get("id");
  const fallbackLocale = resolveLocale({ acceptLanguage: request.headers.get("accept-language"), defaultLocale: settings.defaultLocale });
  const ua = await userAgentOfRequest(inst.db, inst.config.issuer, request);
  const authRequest = ua ? await findPendingAuthRequest(inst.db, id, ua.id) : undefined;
  if (!ua || !authRequest || !id) {
    const texts = await pageOverrides(inst.db, fallbackLocale);
    return authorizeErrorPage({ status: 400, locale: fallbackLocale, code: "expired", theme: settings.branding, texts });
  }
  const client = await getClient(inst.db, authRequest.clientId);
  const texts = await pageOverrides(inst.db, authRequest.locale);
  if (!client || !client.redirectUris.includes(authRequest.redirectUri)) {
    return authorizeErrorPage({ status: 400, locale: authRequest.locale, code: "unknownClient", theme: settings.branding, texts });
  }
  const now = new Date();
  const session = authRequest.sessionId ? await getLiveSession(inst.db, ua.id, authRequest.sessionId, now) : undefined;
  if (!session || !sessionSatisfies(authRequest, session, now)) {
    await updateAuthRequest(inst.db, id, { sessionId: null });
    return redirect(loginUrl(LOGIN_PATHS.loginName, id), []);
  }
  try {
    return await completeAuthorization(inst, id, authRequest, client, session, settings);
  } catch (err) {
    const e = err instanceof OAuthError ? err : new ServerError("The server encountered an unexpected condition.");
    if (!(err instanceof OAuthError)) log().error({ err }, "authorize callback failed");
    return deliverAuthorizationResponse(
      { redirectUri: authRequest.redirectUri, mode: authRequest.responseMode as "query", lang: authRequest.locale, theme: settings.branding, texts },
      { error: e.error, error_description: e.description, state: authRequest.state ?? undefined },
    );
  }
}

/**
 * Whether a session may finish this request: authenticated recently enough for max_age, after
 * the request when prompt=login asked for a fresh sign-in, and the hinted subject if any.
 */
export function sessionSatisfies(
  authRequest: Pick<AuthRequest, "maxAge" | "prompt" | "createdAt" | "hintSubject">,
  session: { authTime: Date; userId: string },
  now: Date,
): boolean {
  if (!freshEnough(session, authRequest.maxAge, now)) return false;
  if (authRequest.prompt.includes("login") && session.authTime.getTime() < authRequest.createdAt.getTime() - 1000) return false;
  return true;
}
