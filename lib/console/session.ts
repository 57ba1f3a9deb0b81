import type { Engine } from "@/lib/engine";
import { isActiveAdmin } from "@/lib/management/auth";
import {
  appAccess,
  appCsrfToken,
  clearedAppCookie,
  finishAppSignIn,
  safeReturnTo as appReturnTo,
  startAppSignIn,
  verifyAppCsrf,
  type AppCallbackResult,
} from "@/lib/first-party/app-session";
import type { User } from "@/lib/store/users";
import { CONSOLE_APP } from "./client";

/**
 * The console session: the first-party app session of the console (lib/first-party/app-session.ts),
 * plus the one thing only the console asks: whether the user is an active administrator, checked
 * on every request, so removing the admin role ends console access at once.
 */
export const CONSOLE_COOKIE = CONSOLE_APP.cookie;
/** The PKCE verifier, state and nonce of a console sign-in in progress. */
export const CONSOLE_LOGIN_COOKIE = CONSOLE_APP.loginCookie;

export const clearedConsoleCookie = (issuer: string) => clearedAppCookie(issuer, CONSOLE_APP);

/** Only console paths are valid return targets, so the sign-in cannot become an open redirect. */
export const safeReturnTo = (value: string | null | undefined) => appReturnTo(CONSOLE_APP, value);

/** Starts a console sign-in: the authorization request URL and the cookie keeping its secrets. */
export const startSignIn = (inst: Engine, opts: { returnTo?: string | null; prompt?: string | null; locale?: string | null }) => startAppSignIn(inst, CONSOLE_APP, opts);

/** The console's redirect URI (lib/first-party/app-session.ts finishAppSignIn). */
export const finishSignIn = (inst: Engine, params: URLSearchParams, cookies: { login?: string }, clientAddress: string): Promise<AppCallbackResult> =>
  finishAppSignIn(inst, CONSOLE_APP, params, cookies, clientAddress);

export type ConsoleAccess =
  | { status: "none" }
  | { status: "denied"; user: User; sid: string; userAgentId: string; csrf: string }
  | { status: "admin"; user: User; sid: string; userAgentId: string; csrf: string };

/** Who is using the console, checked afresh on every request, and whether they are an administrator now. */
export async function consoleAccess(inst: Engine, cookies: { console?: string; userAgent?: string }): Promise<ConsoleAccess> {
  const access = await appAccess(inst, CONSOLE_APP, { app: cookies.console, userAgent: cookies.userAgent });
  if (!access) return { status: "none" };
  return { status: access.user.type === "human" && isActiveAdmin(access.user) ? "admin" : "denied", ...access };
}

/** CSRF token of console forms: bound to the browser and the login session behind the console session. */
export const consoleCsrfToken = (masterKey: Buffer, userAgentId: string, sid: string) => appCsrfToken(masterKey, CONSOLE_APP, userAgentId, sid);

export const verifyConsoleCsrf = (masterKey: Buffer, userAgentId: string, sid: string, presented: unknown) => verifyAppCsrf(masterKey, CONSOLE_APP, userAgentId, sid, presented);
