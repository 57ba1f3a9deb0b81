import { dateOf } from "@/lib/clock";
import type { Engine } from "@/lib/engine";
import { BodyTooLarge, bodyTooLargeResponse, isFormEncoded, MAX_FORM_BYTES, readBodyText } from "@/lib/http/body";
import { clientAddress } from "@/lib/http/client-address";
import { NO_STORE, seeOther } from "@/lib/http/responses";
import { requestCookie } from "@/lib/session/cookies";
import { userAgentCookieName } from "@/lib/session/user-agent";
import { recordAudit, type Actor } from "@/lib/store/audit";
import { endSessions } from "@/lib/store/sessions";
import type { FirstPartyApp } from "./app";
import { appAccess, clearedAppCookie, finishAppSignIn, startAppSignIn, verifyAppCsrf, type AppAccess } from "./app-session";
import type { HttpRequest } from "@/lib/http/request";

/** GET {app}/signin: starts the app's code flow at the authorization endpoint. */
export async function handleAppSignIn(inst: Engine, app: FirstPartyApp, request: HttpRequest): Promise<Response> {
  const url = new URL(request.url);
  // `reauth=1`: the app's user must sign in again before a sensitive change. While the app still
  // knows who that is, the request names them (max_age=0 and their login name), so the login goes
  // straight to their password; without the app's session it is prompt=login.
  const reauth = url.searchParams.get("reauth") === "1";
  const access = reauth ? await requestAppAccess(inst, app, request) : null;
  const { location, setCookie } = await startAppSignIn(inst, app, {
    returnTo: url.searchParams.get("returnTo"),
    prompt: reauth && !access ? "login" : url.searchParams.get("prompt"),
    reauthenticate: access?.user.username,
  });
  return seeOther(location, [setCookie]);
}

/** GET {app}/callback: the app client's redirect URI. */
export async function handleAppCallback(inst: Engine, app: FirstPartyApp, request: HttpRequest): Promise<Response> {
  const url = new URL(request.url);
  const result = await finishAppSignIn(inst, app, url.searchParams, { login: requestCookie(request, app.loginCookie) }, clientAddress(request));
  if (!result.ok) return seeOther(`${inst.config.issuer}${app.path}/signed-out?failed=${encodeURIComponent(result.reason)}`);
  return seeOther(`${inst.config.issuer}${result.returnTo}`, result.setCookies);
}

/** The app's access of a request, from its cookies. */
export function requestAppAccess(inst: Engine, app: FirstPartyApp, request: HttpRequest): Promise<AppAccess | null> {
  return appAccess(inst, app, { app: requestCookie(request, app.cookie), userAgent: requestCookie(request, userAgentCookieName(inst.config.issuer)) });
}

/** A form of the app: its fields, or null when it is not a form-encoded body of a few fields. */
export async function readAppForm(request: HttpRequest): Promise<URLSearchParams | null> {
  if (request.method !== "POST" || !isFormEncoded(request)) return null;
  return new URLSearchParams(await readBodyText(request, MAX_FORM_BYTES));
}

export const formNotVerified = () =>
  new Response("The form could not be verified. Reload the page and try again.", { status: 403, headers: { "Content-Type": "text/plain; charset=utf-8", ...NO_STORE } });

/**
 * POST {app}/signout: ends the app's session and the login session behind it (so that the next
 * visit asks for the password again), with the app's CSRF token; audited as `action`.
 */
export async function handleAppSignOut(inst: Engine, app: FirstPartyApp, request: HttpRequest, action: string): Promise<Response> {
  const issuer = inst.config.issuer;
  // The form is a few fields (lib/http/body.ts): a larger body is refused before it is read.
  let form: URLSearchParams | null = null;
  try {
    form = await readAppForm(request);
  } catch (err) {
    if (err instanceof BodyTooLarge) return bodyTooLargeResponse();
    form = null;
  }
  const access = await requestAppAccess(inst, app, request);
  if (access) {
    if (!form || !verifyAppCsrf(inst.masterKey, app, access.userAgentId, access.sid, form.get("csrf"))) return formNotVerified();
    const actor: Actor = { type: "user", id: access.user.id, ip: clientAddress(request), userAgent: request.headers.get("user-agent") };
    await inst.db.transaction(async (tx) => {
      const ended = await endSessions(tx, access.userAgentId, [access.sid], dateOf(inst.clock));
      if (ended.length) await recordAudit(tx, actor, { action, targetType: "user", targetId: access.user.id, details: { sessionId: access.sid } });
    });
  }
  return seeOther(`${issuer}${app.path}/signed-out`, [clearedAppCookie(issuer, app)]);
}
