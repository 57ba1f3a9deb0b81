import type { Repositories } from "@/lib/store/repositories";
import type { BrowserWithSessions } from "@/lib/store/sessions";
import { requestCookie, serializeCookie } from "./cookies";
import type { HttpRequest } from "@/lib/http/request";

/**
 * The one cookie that names the browser. `__Host-` on https pins it to this origin and path `/`;
 * plain http (local development, tests) cannot use the prefix.
 */
export function userAgentCookieName(issuer: string): string {
  return issuer.startsWith("https://") ? "__Host-torii_ua" : "torii_ua";
}

/** A year: the user agent outlives its sessions, whose expiry is enforced server-side. */
const UA_COOKIE_MAX_AGE = 365 * 86_400;

export function userAgentCookie(issuer: string, value: string): string {
  return serializeCookie(userAgentCookieName(issuer), value, {
    httpOnly: true,
    sameSite: "Lax",
    secure: issuer.startsWith("https://"),
    maxAge: UA_COOKIE_MAX_AGE,
  });
}

type Browsers = Pick<Repositories, "sessions">;

export async function userAgentOfRequest(store: Browsers, issuer: string, request: HttpRequest): Promise<{ id: string } | undefined> {
  const cookie = requestCookie(request, userAgentCookieName(issuer));
  return cookie ? store.sessions.findUserAgent(cookie) : undefined;
}

/** `userAgentOfRequest` with the browser's live sessions, read together (lib/store/sessions.ts). */
export async function browserOfRequest(
  store: Browsers,
  issuer: string,
  request: HttpRequest,
  now: Date,
): Promise<BrowserWithSessions | undefined> {
  const cookie = requestCookie(request, userAgentCookieName(issuer));
  return cookie ? store.sessions.findBrowser(cookie, now) : undefined;
}

/**
 * A new user agent row and the Set-Cookie header that names it. Called only when something is
 * about to be stored for the browser (a pending authorization request), never for a request that
 * ends in an error, so that cookieless requests cannot grow the table; rows left with nothing are
 * purged by the maintenance sweep.
 */
export async function createBrowser(store: Browsers, issuer: string): Promise<{ id: string; setCookie: string }> {
  const ua = await store.sessions.createUserAgent();
  return { id: ua.id, setCookie: userAgentCookie(issuer, ua.cookie) };
}
