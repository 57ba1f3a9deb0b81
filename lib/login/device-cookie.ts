import { constantTimeEqual, hmac } from "@/lib/crypto";
import { requestCookie, serializeCookie } from "@/lib/session/cookies";
import type { HttpRequest } from "@/lib/http/request";

/**
 * The device cookie (OWASP "Slow Down Online Guessing Attacks with Device Cookies"): set when a
 * browser signs in to an account successfully, it names that user with an HMAC under the master
 * key. A browser presenting it for the account it names is exempt from that account's lock (the
 * attacker's failures do not lock the owner out), though never from its own per-(account,
 * address) throttle. It holds only user ids, which are not secret; it cannot be forged without
 * the master key. Several users of one browser share the cookie, newest first, up to MAX_USERS.
 */
export function deviceCookieName(issuer: string): string {
  return issuer.startsWith("https://") ? "__Host-torii_device" : "torii_device";
}

const MAX_USERS = 10;
const MAX_AGE = 365 * 86_400;
const LABEL = "torii device cookie v1:";

function entry(masterKey: Buffer, userId: string): string {
  return `${userId}.${hmac(masterKey, LABEL + userId)}`;
}

/** The users this browser has proven to have signed in to (entries with a valid HMAC only). */
export function trustedUsers(masterKey: Buffer, issuer: string, request: HttpRequest): string[] {
  const raw = requestCookie(request, deviceCookieName(issuer)) ?? "";
  const out: string[] = [];
  for (const part of raw.split("~").slice(0, MAX_USERS)) {
    const dot = part.indexOf(".");
    if (dot <= 0) continue;
    const userId = part.slice(0, dot);
    if (constantTimeEqual(part, entry(masterKey, userId))) out.push(userId);
  }
  return out;
}

/** The Set-Cookie value after `userId` signed in: it moves to the front, the oldest falls off. */
export function deviceCookieAfterSignIn(masterKey: Buffer, issuer: string, request: HttpRequest, userId: string): string {
  const users = [userId, ...trustedUsers(masterKey, issuer, request).filter((u) => u !== userId)].slice(0, MAX_USERS);
  return serializeCookie(deviceCookieName(issuer), users.map((u) => entry(masterKey, u)).join("~"), {
    httpOnly: true,
    sameSite: "Lax",
    secure: issuer.startsWith("https://"),
    maxAge: MAX_AGE,
  });
}
