import type { FirstPartyApp } from "@/lib/first-party/app";
import { ACCOUNT_PATH } from "@/lib/login/paths";

export { ACCOUNT_PATH };

/**
 * The account page, where a signed-in person manages their own account: a first-party app
 * (lib/first-party/app.ts), so reaching it goes through the sign-in policy like any application
 * (second factor, verified address) and it holds no password itself.
 */
export const ACCOUNT_APP: FirstPartyApp = {
  clientId: "torii-account",
  name: "Torii Account",
  path: ACCOUNT_PATH,
  cookie: "torii_account",
  loginCookie: "torii_account_login",
  sessionMaxAgeSeconds: 12 * 3600,
};

/**
 * Changes to second factors and to the email address need a sign-in this recent (seconds):
 * someone who finds a browser left signed in cannot take over the account's factors, or its
 * mail (and so its password resets), without the password (and the factor).
 */
export const RECENT_SIGN_IN_SECONDS = 15 * 60;

/** Whether a login session's sign-in (`authTime`) is recent enough for those changes at `now` (ms). */
export function isRecentSignIn(authTime: Date, now: number): boolean {
  return now - authTime.getTime() <= RECENT_SIGN_IN_SECONDS * 1000;
}
