import type { Engine } from "@/lib/engine";
import { decrypt, encrypt } from "@/lib/crypto";
import { BodyTooLarge, bodyTooLargeResponse } from "@/lib/http/body";
import { clientAddress } from "@/lib/http/client-address";
import { hasNul } from "@/lib/http/text-input";
import { seeOther } from "@/lib/http/responses";
import { clearedAppCookie, verifyAppCsrf } from "@/lib/first-party/app-session";
import { formNotVerified, handleAppCallback, handleAppSignIn, handleAppSignOut, readAppForm, requestAppAccess } from "@/lib/first-party/app-routes";
import { sameOrigin } from "@/lib/session/csrf";
import { localeCookie, serializeCookie } from "@/lib/session/cookies";
import type { Actor } from "@/lib/store/audit";
import { ACCOUNT_ACTIONS, type AccountAction } from "./actions";
import { ACCOUNT_APP, ACCOUNT_PATH } from "./app";
import type { HttpRequest } from "@/lib/http/request";

/**
 * The account page's HTTP side: its sign-in (a first-party app, lib/first-party/app-routes.ts),
 * and its forms. Every form is a plain POST (no JavaScript needed) carrying the page's CSRF
 * token; the answer is a redirect back to the page's section with what happened (`done`) or
 * what went wrong (`error`), never a change the form did not ask for.
 */

export const handleAccountSignIn = (inst: Engine, request: HttpRequest) => handleAppSignIn(inst, ACCOUNT_APP, request);
export const handleAccountCallback = (inst: Engine, request: HttpRequest) => handleAppCallback(inst, ACCOUNT_APP, request);
export const handleAccountSignOut = (inst: Engine, request: HttpRequest) => handleAppSignOut(inst, ACCOUNT_APP, request, "account.signed_out");

/** Where on the page each form's answer is shown. */
const SECTION: Record<AccountAction, string> = {
  profile: "profile",
  email: "email",
  "verify-email": "email",
  "confirm-email": "email",
  password: "password",
  "add-authenticator": "factors",
  "add-passkey": "factors",
  "remove-factor": "factors",
  "recovery-codes": "factors",
  "end-session": "sessions",
  "revoke-app": "apps",
};

/** The enrolment form (`?add=`) each adding action comes from. */
const ADDS: Partial<Record<AccountAction, "authenticator" | "passkey">> = { "add-authenticator": "authenticator", "add-passkey": "passkey" };

export const isAccountAction = (name: string): name is AccountAction => Object.hasOwn(ACCOUNT_ACTIONS, name);

/**
 * Recovery codes just created are shown once: they travel to the page in a cookie sealed under
 * the master key, scoped to the page, for at most ten minutes or until "I have saved them".
 */
export const RECOVERY_CODES_COOKIE = "torii_account_codes";
const CODES_AAD = "torii-account-recovery-codes";
const CODES_MAX_AGE = 600;

function codesCookie(inst: Engine, value: string, maxAge: number): string {
  return serializeCookie(RECOVERY_CODES_COOKIE, value, { httpOnly: true, sameSite: "Strict", secure: inst.config.issuer.startsWith("https://"), maxAge, path: ACCOUNT_PATH });
}

/** The codes in the cookie, if it was sealed for this user and is not older than ten minutes. */
export function recoveryCodesFromCookie(masterKey: Buffer, userId: string, value: string | undefined, now: number): string[] | null {
  if (!value || value.length > 4096) return null;
  try {
    const data = JSON.parse(decrypt(masterKey, value, CODES_AAD)) as { uid: string; codes: string[]; exp: number };
    return data.uid === userId && data.exp > now ? data.codes : null;
  } catch {
    return null;
  }
}

/** POST /ui/account/submit/{action}: one form of the page. */
export async function handleAccountForm(inst: Engine, request: HttpRequest, action: string): Promise<Response> {
  const page = `${inst.config.issuer}${ACCOUNT_PATH}`;
  try {
    const form = await readAppForm(request);
    const access = await requestAppAccess(inst, ACCOUNT_APP, request);
    if (!access) return seeOther(`${page}/signin?returnTo=${encodeURIComponent(ACCOUNT_PATH)}`);
    if (!form || [...form].some(([k, v]) => hasNul(k) || hasNul(v))) return seeOther(`${page}?error=badRequest`);
    if (!sameOrigin(request, inst.config.issuer) || !verifyAppCsrf(inst.masterKey, ACCOUNT_APP, access.userAgentId, access.sid, form.get("csrf"))) return formNotVerified();
    if (action === "codes-saved") return seeOther(`${page}#factors`, [codesCookie(inst, "", 0)]);
    if (!isAccountAction(action)) return seeOther(`${page}?error=badRequest`);
    const actor: Actor = { type: "user", id: access.user.id, ip: clientAddress(request), userAgent: request.headers.get("user-agent") };
    const outcome = await ACCOUNT_ACTIONS[action]({ inst, access, actor, form });
    const section = SECTION[action];
    if (!outcome.ok) {
      const violations = outcome.violations?.length ? `&violations=${outcome.violations.join(",")}` : "";
      // A refused enrolment shows its form again (the same key: the pending factor is kept), so a
      // mistyped code can simply be typed again.
      const again = ADDS[action] ? `&add=${ADDS[action]}` : "";
      return seeOther(`${page}?error=${outcome.error}${violations}${again}&section=${section}#${section}`);
    }
    // Signing this browser's own session out ends the page's access too.
    if (outcome.done === "signedOutHere") return seeOther(`${page}/signed-out`, [clearedAppCookie(inst.config.issuer, ACCOUNT_APP)]);
    const cookies = outcome.recoveryCodes
      ? [codesCookie(inst, encrypt(inst.masterKey, JSON.stringify({ uid: access.user.id, codes: outcome.recoveryCodes, exp: inst.clock.now() + CODES_MAX_AGE * 1000 }), CODES_AAD), CODES_MAX_AGE)]
      : [];
    // The profile's language pins the pages' (the cookie the login pages pin with ui_locales);
    // "as my browser says" unpins them, so that Accept-Language decides again.
    if (outcome.pageLocale !== undefined) cookies.push(localeCookie(inst.config.issuer, outcome.pageLocale));
    // New recovery codes are shown once, in their own card at the top: that is where the page opens.
    const anchor = outcome.recoveryCodes ? "recovery-codes" : section;
    return seeOther(`${page}?done=${outcome.done}&section=${section}#${anchor}`, cookies);
  } catch (err) {
    if (err instanceof BodyTooLarge) return bodyTooLargeResponse();
    inst.log.error({ err }, "account form failed");
    return seeOther(`${page}?error=serverError`);
  }
}
