import type { Engine } from "@/lib/engine";
import { BodyTooLarge, bodyTooLargeResponse, isFormEncoded, MAX_FORM_BYTES, readBodyText } from "@/lib/http/body";
import { clientAddress } from "@/lib/http/client-address";
import { NO_STORE, seeOther } from "@/lib/http/responses";
import { actorFor } from "@/lib/management/route";
import { requestCookie } from "@/lib/session/cookies";
import { recordAudit } from "@/lib/store/audit";
import { endSessions } from "@/lib/store/sessions";
import { CONSOLE_PATH } from "./client";
import {
  clearedConsoleCookie,
  CONSOLE_COOKIE,
  CONSOLE_LOGIN_COOKIE,
  consoleAccess,
  finishSignIn,
  startSignIn,
  verifyConsoleCsrf,
} from "./session";
import { userAgentCookieName } from "@/lib/session/user-agent";

/** GET /ui/console/signin: starts the console's code flow at the authorization endpoint. */
export async function handleConsoleSignIn(inst: Engine, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const { location, setCookie } = await startSignIn(inst, {
    returnTo: url.searchParams.get("returnTo"),
    prompt: url.searchParams.get("prompt"),
  });
  return seeOther(location, [setCookie]);
}

/** GET /ui/console/callback: the console client's redirect URI. */
export async function handleConsoleCallback(inst: Engine, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const result = await finishSignIn(inst, url.searchParams, { login: requestCookie(request, CONSOLE_LOGIN_COOKIE) }, clientAddress(request));
  if (!result.ok) return seeOther(`${inst.config.issuer}${CONSOLE_PATH}/signed-out?failed=${encodeURIComponent(result.reason)}`);
  return seeOther(`${inst.config.issuer}${result.returnTo}`, result.setCookies);
}

/**
 * POST /ui/console/signout: ends the console session and the login session behind it (so that
 * the next visit asks for the password again), with the console's CSRF token.
 */
export async function handleConsoleSignOut(inst: Engine, request: Request): Promise<Response> {
  const issuer = inst.config.issuer;
  // The form is a few fields (lib/http/body.ts): a larger body is refused before it is read.
  let form: URLSearchParams | null = null;
  try {
    form = isFormEncoded(request) ? new URLSearchParams(await readBodyText(request, MAX_FORM_BYTES)) : null;
  } catch (err) {
    if (err instanceof BodyTooLarge) return bodyTooLargeResponse();
    form = null;
  }
  const access = await consoleAccess(inst, {
    console: requestCookie(request, CONSOLE_COOKIE),
    userAgent: requestCookie(request, userAgentCookieName(issuer)),
  });
  if (access.status !== "none") {
    if (!form || !verifyConsoleCsrf(inst.masterKey, access.userAgentId, access.sid, form.get("csrf"))) {
      return new Response("The form could not be verified. Reload the page and try again.", {
        status: 403,
        headers: { "Content-Type": "text/plain; charset=utf-8", ...NO_STORE },
      });
    }
    await inst.db.transaction(async (tx) => {
      const ended = await endSessions(tx, access.userAgentId, [access.sid]);
      if (ended.length) {
        await recordAudit(tx, actorFor(request, access.user, clientAddress(request)), {
          action: "console.signed_out",
          targetType: "user",
          targetId: access.user.id,
          details: { sessionId: access.sid },
        });
      }
    });
  }
  return seeOther(`${issuer}${CONSOLE_PATH}/signed-out`, [clearedConsoleCookie(issuer)]);
}
