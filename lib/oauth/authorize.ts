import { dateOf } from "@/lib/clock";
import { isInputDataError } from "@/lib/http/text-input";
import { BodyTooLarge, bodyTooLargeResponse } from "@/lib/http/body";
import { unexpectedOAuthError } from "@/lib/http/responses";
import { resolveLocale } from "@/lib/i18n/locales";
import { pageOverrides } from "@/lib/i18n/overrides";
import type { Engine } from "@/lib/engine";
import { interactionPage, loadPolicyInput, pendingStep } from "@/lib/login/steps";
import { localeCookie } from "@/lib/session/cookies";
import { browserOfRequest, createBrowser, userAgentOfRequest } from "@/lib/session/user-agent";
import type { Settings } from "@/lib/store/settings";
import type { NewAuthRequest } from "@/lib/store/auth-requests";
import { completeAuthorization, unstoredAuthRequest } from "./authorize-complete";
import { authorizeErrorPage } from "./authorize-pages";
import { validateAuthorizeRequest } from "./authorize-request";
import { AccessDenied, AccountSelectionRequired, ConsentRequired, InteractionRequired, UnmetAuthenticationRequirements, LoginRequired, OAuthError } from "@/lib/protocol/errors";
import { canonicalResponseType, readAuthorizeParams } from "./params/authorize";
import { requestObjectResponseMode } from "./request-object-mode";
import { deliverAuthorizationResponse, effectiveResponseMode } from "./response-modes";
import { isRegisteredRedirectUri } from "./redirect-uri";
import { nextStep, type ClientErrorCode } from "@/lib/login/signin-policy";
import type { HttpRequest } from "@/lib/http/request";

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
export async function handleAuthorize(inst: Engine, request: HttpRequest): Promise<Response> {
  let settings: Settings;
  try {
    settings = await inst.store.settings.get();
  } catch (err) {
    // The settings are the first read: a database out of reach shows here, as a 503 to retry.
    const e = unexpectedOAuthError(inst.log, err, { in: "authorize" });
    const locale = resolveLocale({ acceptLanguage: request.headers.get("accept-language"), defaultLocale: "en" });
    const response = authorizeErrorPage({ status: e.status, locale, code: "serverError" });
    for (const [k, v] of Object.entries(e.headers)) response.headers.set(k, v);
    return response;
  }
  const acceptLanguage = request.headers.get("accept-language");
  const raw = await readAuthorizeParams(request).catch((err: unknown) => (err instanceof BodyTooLarge ? err : { unsupportedBody: true as const }));
  if (raw instanceof BodyTooLarge) return bodyTooLargeResponse();
  if ("unsupportedBody" in raw) {
    const locale = resolveLocale({ acceptLanguage, defaultLocale: settings.defaultLocale });
    return authorizeErrorPage({ status: 400, locale, code: "badRequest", theme: settings.branding, texts: await pageOverrides(inst, locale) });
  }
  const v = raw.values;
  const locale = resolveLocale({ uiLocales: v.ui_locales, acceptLanguage, defaultLocale: settings.defaultLocale });
  const texts = await pageOverrides(inst, locale);
  const page = (code: string) => authorizeErrorPage({ status: 400, locale, code, theme: settings.branding, texts });

  if (raw.repeated.includes("client_id") || raw.repeated.includes("redirect_uri")) return page("repeatedClient");
  if (!v.client_id) return page("missingClientId");
  let client;
  try {
    client = v.client_id.length <= 200 ? await inst.store.clients.get(v.client_id) : undefined;
  } catch (err) {
    // A client id the database refuses (lib/http/text-input.ts) names no client.
    if (!isInputDataError(err)) throw err;
    client = undefined;
  }
  if (!client) return page("unknownClient");
  if (!v.redirect_uri) return page("missingRedirectUri");
  if (!isRegisteredRedirectUri(client.redirectUris, v.redirect_uri)) return page("redirectUriMismatch");

  const redirectUri = v.redirect_uri;
  // Request objects are refused, but in the response mode the client asked for, even when it
  // asked only inside the (unverified) request object: see request-object-mode.ts.
  const requestedMode = requestObjectResponseMode(v.request) ?? v.response_mode;
  const mode = effectiveResponseMode(requestedMode, v.response_type && canonicalResponseType(v.response_type));
  const respond = (params: Record<string, string | undefined>, cookies: string[] = []) =>
    withCookies(deliverAuthorizationResponse({ redirectUri, mode, lang: locale, theme: settings.branding, texts }, params), cookies);
  const fail = (err: OAuthError, cookies: string[] = []) =>
    respond({ error: err.error, error_description: err.description, state: v.state }, cookies);

  try {
    const req = await validateAuthorizeRequest(raw, client, inst);
    // A browser's row is created only once something is stored for it (the pending request
    // below), so requests that end in an error leave nothing behind.
    const now = dateOf(inst.clock);
    const knownUa = await browserOfRequest(inst.store, inst.config.issuer, request, now);
    const cookies = [localeCookie(inst.config.issuer, locale)];
    const policyRequest = {
      prompt: req.prompt,
      maxAge: req.maxAge,
      loginHint: req.loginHint,
      hintSubject: req.hintSubject,
      subjects: req.claims?.subjects ?? null,
      acrValues: req.acrValues,
      essentialAcr: req.claims?.acr ?? null,
      createdAt: now,
    };
    const step = nextStep(
      await loadPolicyInput(inst.store, {
        request: policyRequest,
        userAgentId: knownUa?.id ?? null,
        liveSessions: knownUa?.sessions,
        chosenSessionId: null,
        primaryDomain: settings.primaryDomain,
        now,
        consent: { client, scopes: req.scopes, resources: req.resources, denied: false },
      }),
    );
    if (step.step === "error") return fail(clientError(step), cookies);

    const ua: { id: string; setCookie?: string } = knownUa ?? (await createBrowser(inst.store, inst.config.issuer));
    if (ua.setCookie) cookies.unshift(ua.setCookie);
    const data: NewAuthRequest = {
      userAgentId: ua.id,
      clientId: client.id,
      redirectUri,
      responseType: req.responseType,
      responseMode: mode,
      scopes: req.scopes,
      resources: req.resources,
      state: req.state,
      nonce: req.nonce,
      codeChallenge: req.codeChallenge,
      codeChallengeMethod: req.codeChallengeMethod,
      prompt: req.prompt,
      maxAge: req.maxAge,
      loginHint: req.loginHint,
      hintSubject: req.hintSubject,
      claims: req.claims,
      acrValues: req.acrValues,
      locale,
      loginName: step.step === "signIn" ? step.loginName : step.step === "reauthenticate" ? step.account.username : null,
    };
    // Answered at once: nothing to store (unstoredAuthRequest says why).
    if (step.step === "finish") return withCookies(await completeAuthorization(inst, null, unstoredAuthRequest(data, now), client, step.account, settings), cookies);
    const { id } = await inst.store.authRequests.create(data, now);
    const next = interactionPage(step, id);
    // The pages of a signed-in account (consent, second factor, address code) ask for the session
    // the policy chose; the other pages start from nothing.
    if (next.patch.sessionId) await inst.store.authRequests.update(id, next.patch);
    return redirect(next.location, cookies);
  } catch (err) {
    return fail(err instanceof OAuthError ? err : unexpectedOAuthError(inst.log, err, { in: "authorize" }));
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
export async function handleAuthorizeCallback(inst: Engine, request: HttpRequest): Promise<Response> {
  const settings = await inst.store.settings.get();
  const id = new URL(request.url).searchParams.get("id");
  const fallbackLocale = resolveLocale({ acceptLanguage: request.headers.get("accept-language"), defaultLocale: settings.defaultLocale });
  const ua = await userAgentOfRequest(inst.store, inst.config.issuer, request);
  const authRequest = ua ? await inst.store.authRequests.findPending(id, ua.id) : undefined;
  if (!ua || !authRequest || !id) {
    const texts = await pageOverrides(inst, fallbackLocale);
    return authorizeErrorPage({ status: 400, locale: fallbackLocale, code: "expired", theme: settings.branding, texts });
  }
  const client = await inst.store.clients.get(authRequest.clientId);
  const texts = await pageOverrides(inst, authRequest.locale);
  if (!client || !isRegisteredRedirectUri(client.redirectUris, authRequest.redirectUri)) {
    return authorizeErrorPage({ status: 400, locale: authRequest.locale, code: "unknownClient", theme: settings.branding, texts });
  }
  const now = dateOf(inst.clock);
  const step = await pendingStep(inst.store, authRequest, client, settings.primaryDomain, now);
  if (step.step !== "finish" && step.step !== "error") {
    const next = interactionPage(step, id);
    await inst.store.authRequests.update(id, next.patch);
    return redirect(next.location, []);
  }
  try {
    if (step.step === "error") throw clientError(step);
    return await completeAuthorization(inst, id, authRequest, client, step.account, settings);
  } catch (err) {
    const e = err instanceof OAuthError ? err : unexpectedOAuthError(inst.log, err, { in: "authorize callback" });
    return deliverAuthorizationResponse(
      { redirectUri: authRequest.redirectUri, mode: authRequest.responseMode as "query", lang: authRequest.locale, theme: settings.branding, texts },
      { error: e.error, error_description: e.description, state: authRequest.state ?? undefined },
    );
  }
}

const CLIENT_ERRORS: Record<ClientErrorCode, new (description: string) => OAuthError> = {
  login_required: LoginRequired,
  account_selection_required: AccountSelectionRequired,
  consent_required: ConsentRequired,
  access_denied: AccessDenied,
  interaction_required: InteractionRequired,
  unmet_authentication_requirements: UnmetAuthenticationRequirements,
};

/** The policy's answer for the client as the OAuth error it is delivered as. */
function clientError(step: { error: ClientErrorCode; description: string }): OAuthError {
  return new CLIENT_ERRORS[step.error](step.description);
}
