import { dateOf } from "@/lib/clock";
import { decodeJwt } from "jose";
import type { Engine } from "@/lib/engine";
import { constantTimeEqual, decrypt, encrypt, hmac, randomToken, sha256 } from "@/lib/crypto";
import { CLIENT_ADDRESS_HEADER } from "@/lib/http/client-address";
import { handleToken } from "@/lib/oauth/token-endpoint";
import { localeCookie, serializeCookie } from "@/lib/session/cookies";
import { findUserAgent, getLiveSession } from "@/lib/store/sessions";
import { getUser, type User } from "@/lib/store/users";
import { appRedirectUri, ensureAppClient, type FirstPartyApp } from "./app";

/**
 * The session of a first-party app (lib/first-party/app.ts): an AES-GCM sealed cookie (under the
 * master key) naming the user and the hosted-login session (`sid`) the app's sign-in produced. It
 * grants nothing by itself: every request re-checks that this browser's user agent cookie still
 * holds that session live and that the user is still unlocked. Ending the login session or
 * locking the user ends the app's access at once.
 */
const sessionAad = (app: FirstPartyApp) => `${app.clientId}-session`;
const loginAad = (app: FirstPartyApp) => `${app.clientId}-login`;
const LOGIN_MAX_AGE = 600;

type Sealed = { uid: string; sid: string; exp: number };
type Pending = { verifier: string; state: string; nonce: string; returnTo: string; exp: number };

const secure = (issuer: string) => issuer.startsWith("https://");

/**
 * Lax rather than Strict: a sign-in started from another site's link is one redirect chain, and
 * Chromium withholds Strict cookies for the whole chain, so the app would send the browser back
 * to sign in forever. Mutations do not rest on SameSite: they need the app's CSRF token.
 */
function sessionCookie(issuer: string, app: FirstPartyApp, value: string, maxAge = app.sessionMaxAgeSeconds): string {
  return serializeCookie(app.cookie, value, { httpOnly: true, sameSite: "Lax", secure: secure(issuer), maxAge, path: app.path });
}

export function clearedAppCookie(issuer: string, app: FirstPartyApp): string {
  return sessionCookie(issuer, app, "", 0);
}

/** Only the app's own paths are valid return targets, so the sign-in cannot become an open redirect. */
export function safeReturnTo(app: FirstPartyApp, value: string | null | undefined): string {
  if (!value || !value.startsWith(app.path) || value.startsWith("//") || /[\\\s]/.test(value)) return app.path;
  const rest = value.slice(app.path.length);
  if (rest && !rest.startsWith("/") && !rest.startsWith("?")) return app.path;
  return value;
}

/** Starts the app's sign-in: the authorization request URL and the cookie keeping its secrets. */
export async function startAppSignIn(
  inst: Engine,
  app: FirstPartyApp,
  opts: { returnTo?: string | null; prompt?: string | null; locale?: string | null; reauthenticate?: string },
): Promise<{ location: string; setCookie: string }> {
  const issuer = inst.config.issuer;
  await ensureAppClient(inst, app);
  const pending: Pending = {
    verifier: randomToken(32),
    state: randomToken(16),
    nonce: randomToken(16),
    returnTo: safeReturnTo(app, opts.returnTo),
    exp: inst.clock.now() + LOGIN_MAX_AGE * 1000,
  };
  const challenge = sha256(pending.verifier);
  const url = new URL(`${issuer}/oauth/v2/authorize`);
  url.search = new URLSearchParams({
    client_id: app.clientId,
    redirect_uri: appRedirectUri(issuer, app),
    response_type: "code",
    scope: "openid profile",
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...(opts.prompt === "select_account" || opts.prompt === "login" ? { prompt: opts.prompt } : {}),
    ...(opts.locale ? { ui_locales: opts.locale } : {}),
    // OIDC Core 3.1.2.1: max_age=0 asks for a new authentication; the login hint picks this
    // user's session among the browser's, so the login asks for that account's password.
    ...(opts.reauthenticate ? { max_age: "0", login_hint: opts.reauthenticate } : {}),
  }).toString();
  const sealed = encrypt(inst.masterKey, JSON.stringify(pending), loginAad(app));
  // Lax, not Strict: the callback arrives as a top-level navigation from the login pages' redirect chain.
  const setCookie = serializeCookie(app.loginCookie, sealed, {
    httpOnly: true,
    sameSite: "Lax",
    secure: secure(issuer),
    maxAge: LOGIN_MAX_AGE,
    path: app.path,
  });
  return { location: url.toString(), setCookie };
}

// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- T names the shape this module sealed (AEAD with its own key and aad), so the cookie can only hold that shape; the caller states which.
function unseal<T extends { exp: number }>(inst: Engine, value: string | undefined, aad: string): T | null {
  if (!value || value.length > 4096) return null;
  try {
    const data = JSON.parse(decrypt(inst.masterKey, value, aad)) as T;
    return typeof data.exp === "number" && data.exp > inst.clock.now() ? data : null;
  } catch {
    return null;
  }
}

export type AppCallbackResult =
  | { ok: true; returnTo: string; setCookies: string[] }
  | { ok: false; reason: "no_pending" | "state" | "denied" | "token"; error?: string };

/**
 * The app's redirect URI: checks the state against the pending sign-in of this browser, redeems
 * the code with its PKCE verifier at the token endpoint (the same handler, called in-process),
 * checks the ID token's audience and nonce, and seals the app's session.
 */
export async function finishAppSignIn(
  inst: Engine,
  app: FirstPartyApp,
  params: URLSearchParams,
  cookies: { login?: string },
  clientAddress: string,
): Promise<AppCallbackResult> {
  const issuer = inst.config.issuer;
  const pending = unseal<Pending>(inst, cookies.login, loginAad(app));
  if (!pending) return { ok: false, reason: "no_pending" };
  const state = params.get("state") ?? "";
  if (!state || !constantTimeEqual(state, pending.state)) return { ok: false, reason: "state" };
  const error = params.get("error");
  const code = params.get("code");
  if (error || !code) return { ok: false, reason: "denied", error: error ?? "invalid_request" };

  const res = await handleToken(
    inst,
    new Request(`${issuer}/oauth/v2/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", [CLIENT_ADDRESS_HEADER]: clientAddress },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: appRedirectUri(issuer, app),
        client_id: app.clientId,
        code_verifier: pending.verifier,
      }),
    }),
  );
  if (!res.ok) return { ok: false, reason: "token", error: ((await res.json()) as { error?: string }).error };
  const tokens = (await res.json()) as { id_token?: string };
  // The token response came from this process, not over a network, so the ID token needs no
  // signature check here; its claims must still be the ones this sign-in asked for.
  const claims = tokens.id_token ? decodeJwt(tokens.id_token) : null;
  if (
    !claims ||
    claims.iss !== issuer ||
    claims.aud !== app.clientId ||
    claims.nonce !== pending.nonce ||
    typeof claims.sub !== "string" ||
    typeof claims.sid !== "string"
  ) {
    return { ok: false, reason: "token", error: "invalid_id_token" };
  }
  const sealed: Sealed = { uid: claims.sub, sid: claims.sid, exp: inst.clock.now() + app.sessionMaxAgeSeconds * 1000 };
  // The language the user chose in their profile is the app's from here on (the cookie the pages
  // pin their language with); without one, the browser's language stays.
  const locale = (await getUser(inst.db, claims.sub))?.locale;
  return {
    ok: true,
    returnTo: pending.returnTo,
    setCookies: [
      sessionCookie(issuer, app, encrypt(inst.masterKey, JSON.stringify(sealed), sessionAad(app))),
      serializeCookie(app.loginCookie, "", { httpOnly: true, sameSite: "Lax", secure: secure(issuer), maxAge: 0, path: app.path }),
      ...(locale ? [localeCookie(issuer, locale)] : []),
    ],
  };
}

/** Who uses the app: the user, the login session behind it, this browser, and the CSRF token of its forms. */
export type AppAccess = { user: User; sid: string; userAgentId: string; csrf: string };

/**
 * Who is using the app, checked afresh on every request: the sealed app cookie, the browser's
 * user-agent cookie still holding that login session live, and the user still unlocked.
 */
export async function appAccess(inst: Engine, app: FirstPartyApp, cookies: { app?: string; userAgent?: string }): Promise<AppAccess | null> {
  const sealed = unseal<Sealed>(inst, cookies.app, sessionAad(app));
  if (!sealed || !cookies.userAgent) return null;
  const ua = await findUserAgent(inst.db, cookies.userAgent);
  if (!ua) return null;
  const session = await getLiveSession(inst.db, ua.id, sealed.sid, dateOf(inst.clock));
  if (!session || session.userId !== sealed.uid) return null;
  const user = await getUser(inst.db, sealed.uid);
  if (!user || user.locked) return null;
  return { user, sid: sealed.sid, userAgentId: ua.id, csrf: appCsrfToken(inst.masterKey, app, ua.id, sealed.sid) };
}

/** CSRF token of the app's forms: bound to the app, the browser and the login session behind the app's session. */
export function appCsrfToken(masterKey: Buffer, app: FirstPartyApp, userAgentId: string, sid: string): string {
  return hmac(masterKey, `${app.clientId}-csrf:${userAgentId}:${sid}`);
}

export function verifyAppCsrf(masterKey: Buffer, app: FirstPartyApp, userAgentId: string, sid: string, presented: unknown): boolean {
  return typeof presented === "string" && presented !== "" && constantTimeEqual(appCsrfToken(masterKey, app, userAgentId, sid), presented);
}
