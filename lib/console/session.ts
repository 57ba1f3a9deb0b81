import { createHash } from "node:crypto";
import { decodeJwt } from "jose";
import type { Engine } from "@/lib/engine";
import { constantTimeEqual, decrypt, encrypt, hmac, randomToken } from "@/lib/crypto";
import { CLIENT_ADDRESS_HEADER } from "@/lib/http/client-address";
import { isActiveAdmin } from "@/lib/management/auth";
import { handleToken } from "@/lib/oauth/token-endpoint";
import { serializeCookie } from "@/lib/session/cookies";
import { findUserAgent, getLiveSession } from "@/lib/store/sessions";
import { getUser, type User } from "@/lib/store/users";
import { CONSOLE_CLIENT_ID, CONSOLE_PATH, consoleRedirectUri, ensureConsoleClient } from "./client";

/**
 * The console session: an AES-GCM sealed cookie (under the master key) naming the user and the
 * hosted-login session (`sid`) the console sign-in produced. It grants nothing by itself: every
 * request re-checks that this browser's user agent cookie still holds that session live and that
 * the user is still an unlocked administrator. Ending the login session, locking the user or
 * removing the admin role ends console access at once.
 */
export const CONSOLE_COOKIE = "torii_console";
/** The PKCE verifier, state and nonce of a console sign-in in progress. */
export const CONSOLE_LOGIN_COOKIE = "torii_console_login";

const SESSION_AAD = "torii-console-session";
const LOGIN_AAD = "torii-console-login";
/** The console cookie outlives no working day; the login session's own expiry applies too. */
const SESSION_MAX_AGE = 12 * 3600;
const LOGIN_MAX_AGE = 600;

type Sealed = { uid: string; sid: string; exp: number };
type Pending = { verifier: string; state: string; nonce: string; returnTo: string; exp: number };

const secure = (issuer: string) => issuer.startsWith("https://");

/**
 * Lax rather than Strict: a sign-in started from another site's link is one redirect chain, and
 * Chromium withholds Strict cookies for the whole chain, so the console would send the browser
 * back to sign in forever. Mutations do not rest on SameSite: they need the CSRF token below.
 */
function consoleCookie(issuer: string, value: string, maxAge = SESSION_MAX_AGE): string {
  return serializeCookie(CONSOLE_COOKIE, value, { httpOnly: true, sameSite: "Lax", secure: secure(issuer), maxAge, path: CONSOLE_PATH });
}

export function clearedConsoleCookie(issuer: string): string {
  return consoleCookie(issuer, "", 0);
}

/** Only console paths are valid return targets, so the sign-in cannot become an open redirect. */
export function safeReturnTo(value: string | null | undefined): string {
  if (!value || !value.startsWith(CONSOLE_PATH) || value.startsWith("//") || /[\\\s]/.test(value)) return CONSOLE_PATH;
  const rest = value.slice(CONSOLE_PATH.length);
  if (rest && !rest.startsWith("/") && !rest.startsWith("?")) return CONSOLE_PATH;
  return value;
}

/** Starts a console sign-in: the authorization request URL and the cookie keeping its secrets. */
export async function startSignIn(
  inst: Engine,
  opts: { returnTo?: string | null; prompt?: string | null; locale?: string | null },
): Promise<{ location: string; setCookie: string }> {
  const issuer = inst.config.issuer;
  await ensureConsoleClient(inst);
  const pending: Pending = {
    verifier: randomToken(32),
    state: randomToken(16),
    nonce: randomToken(16),
    returnTo: safeReturnTo(opts.returnTo),
    exp: Date.now() + LOGIN_MAX_AGE * 1000,
  };
  const challenge = createHash("sha256").update(pending.verifier).digest("base64url");
  const url = new URL(`${issuer}/oauth/v2/authorize`);
  url.search = new URLSearchParams({
    client_id: CONSOLE_CLIENT_ID,
    redirect_uri: consoleRedirectUri(issuer),
    response_type: "code",
    scope: "openid profile",
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...(opts.prompt === "select_account" || opts.prompt === "login" ? { prompt: opts.prompt } : {}),
    ...(opts.locale ? { ui_locales: opts.locale } : {}),
  }).toString();
  const sealed = encrypt(inst.masterKey, JSON.stringify(pending), LOGIN_AAD);
  // Lax, not Strict: the callback arrives as a top-level navigation from the login pages' redirect chain.
  const setCookie = serializeCookie(CONSOLE_LOGIN_COOKIE, sealed, {
    httpOnly: true,
    sameSite: "Lax",
    secure: secure(issuer),
    maxAge: LOGIN_MAX_AGE,
    path: CONSOLE_PATH,
  });
  return { location: url.toString(), setCookie };
}

// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- T names the shape this module sealed (AEAD with its own key and aad), so the cookie can only hold that shape; the caller states which.
function unseal<T extends { exp: number }>(inst: Engine, value: string | undefined, aad: string): T | null {
  if (!value || value.length > 4096) return null;
  try {
    const data = JSON.parse(decrypt(inst.masterKey, value, aad)) as T;
    return typeof data.exp === "number" && data.exp > Date.now() ? data : null;
  } catch {
    return null;
  }
}

type CallbackResult =
  | { ok: true; returnTo: string; setCookies: string[] }
  | { ok: false; reason: "no_pending" | "state" | "denied" | "token"; error?: string };

/**
 * The console's redirect URI: checks the state against the pending sign-in of this browser,
 * redeems the code with its PKCE verifier at the token endpoint (the same handler, called
 * in-process), checks the ID token's audience and nonce, and seals the console session.
 */
export async function finishSignIn(
  inst: Engine,
  params: URLSearchParams,
  cookies: { login?: string },
  clientAddress: string,
): Promise<CallbackResult> {
  const issuer = inst.config.issuer;
  const pending = unseal<Pending>(inst, cookies.login, LOGIN_AAD);
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
        redirect_uri: consoleRedirectUri(issuer),
        client_id: CONSOLE_CLIENT_ID,
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
    claims.aud !== CONSOLE_CLIENT_ID ||
    claims.nonce !== pending.nonce ||
    typeof claims.sub !== "string" ||
    typeof claims.sid !== "string"
  ) {
    return { ok: false, reason: "token", error: "invalid_id_token" };
  }
  const sealed: Sealed = { uid: claims.sub, sid: claims.sid, exp: Date.now() + SESSION_MAX_AGE * 1000 };
  return {
    ok: true,
    returnTo: pending.returnTo,
    setCookies: [
      consoleCookie(issuer, encrypt(inst.masterKey, JSON.stringify(sealed), SESSION_AAD)),
      serializeCookie(CONSOLE_LOGIN_COOKIE, "", { httpOnly: true, sameSite: "Lax", secure: secure(issuer), maxAge: 0, path: CONSOLE_PATH }),
    ],
  };
}

export type ConsoleAccess =
  | { status: "none" }
  | { status: "denied"; user: User; sid: string; userAgentId: string; csrf: string }
  | { status: "admin"; user: User; sid: string; userAgentId: string; csrf: string };

/**
 * Who is using the console, checked afresh on every request: the sealed console cookie, the
 * browser's user-agent cookie still holding that login session live, and the user's roles now.
 */
export async function consoleAccess(inst: Engine, cookies: { console?: string; userAgent?: string }): Promise<ConsoleAccess> {
  const sealed = unseal<Sealed>(inst, cookies.console, SESSION_AAD);
  if (!sealed || !cookies.userAgent) return { status: "none" };
  const ua = await findUserAgent(inst.db, cookies.userAgent);
  if (!ua) return { status: "none" };
  const session = await getLiveSession(inst.db, ua.id, sealed.sid);
  if (!session || session.userId !== sealed.uid) return { status: "none" };
  const user = await getUser(inst.db, sealed.uid);
  if (!user || user.locked) return { status: "none" };
  if (user.type !== "human" || !isActiveAdmin(user)) return { status: "denied", user, sid: sealed.sid, userAgentId: ua.id, csrf: consoleCsrfToken(inst.masterKey, ua.id, sealed.sid) };
  return { status: "admin", user, sid: sealed.sid, userAgentId: ua.id, csrf: consoleCsrfToken(inst.masterKey, ua.id, sealed.sid) };
}

/** CSRF token of console forms: bound to the browser and the login session behind the console session. */
export function consoleCsrfToken(masterKey: Buffer, userAgentId: string, sid: string): string {
  return hmac(masterKey, `console-csrf:${userAgentId}:${sid}`);
}

export function verifyConsoleCsrf(masterKey: Buffer, userAgentId: string, sid: string, presented: unknown): boolean {
  return typeof presented === "string" && presented !== "" && constantTimeEqual(consoleCsrfToken(masterKey, userAgentId, sid), presented);
}
