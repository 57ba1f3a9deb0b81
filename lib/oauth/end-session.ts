import { hasNul } from "@/lib/http/text-input";
import { BodyTooLarge, bodyTooLargeResponse, MAX_FORM_BYTES, readBodyText } from "@/lib/http/body";
import { clientAddress } from "@/lib/http/client-address";
import { found, seeOther, unexpectedOAuthError } from "@/lib/http/responses";
import { TemporarilyUnavailable } from "@/lib/protocol/errors";
import { resolveLocale } from "@/lib/i18n/locales";
import type { Engine } from "@/lib/engine";
import { LOGIN_PATHS } from "@/lib/login/paths";
import { localeCookie } from "@/lib/session/cookies";
import { userAgentOfRequest } from "@/lib/session/user-agent";
import type { Client } from "@/lib/store/clients";
import type { Session } from "@/lib/store/sessions";
import { verifyIdTokenHint, type IdTokenHint } from "./id-token-hint";
import { sealPendingLogout } from "./end-session-request";
import { unavailablePage } from "./authorize-pages";
import { isFormEncoded } from "@/lib/http/body";
import type { HttpRequest } from "@/lib/http/request";

/** The pages of the logout flow (app/ui/logout) and the signed-out page of the login UI. */
export const LOGOUT_PATHS = {
  confirm: "/ui/logout",
  submit: "/ui/logout/confirm",
  error: "/ui/logout/error",
  signedOut: LOGIN_PATHS.signedOut,
} as const;

/** Why an end_session request is refused; each has a message under `logout.errors`. */
export const LOGOUT_ERRORS = ["badRequest", "invalidHint", "clientMismatch", "unknownClient", "userMismatch", "expired"] as const;
export type LogoutError = (typeof LOGOUT_ERRORS)[number];

const PARAMS = ["id_token_hint", "client_id", "post_logout_redirect_uri", "state", "logout_hint", "ui_locales"] as const;
type Params = Partial<Record<(typeof PARAMS)[number], string>>;

const MAX_PARAM = 8192;

class Refused extends Error {
  constructor(readonly reason: LogoutError) {
    super(reason);
  }
}

/** RP-Initiated Logout 1.0 2: GET query or POST form; a repeated or oversized parameter is refused. */
async function readParams(request: HttpRequest): Promise<Params> {
  let source: URLSearchParams;
  if (request.method === "POST") {
    if (!isFormEncoded(request)) throw new Refused("badRequest");
    source = new URLSearchParams(
      await readBodyText(request, MAX_FORM_BYTES).catch((err: unknown) => {
        if (err instanceof BodyTooLarge) throw err;
        return "";
      }),
    );
  } else {
    source = new URL(request.url).searchParams;
  }
  const out: Params = {};
  for (const name of PARAMS) {
    const values = source.getAll(name);
    if (values.length > 1 || (values[0]?.length ?? 0) > MAX_PARAM || hasNul(values[0] ?? "")) throw new Refused("badRequest");
    if (values[0]) out[name] = values[0];
  }
  return out;
}

export type Actor = { ip: string | null; userAgent: string | null };

/**
 * Ends the sessions of a user agent (all, or only `userId`'s) and revokes every token issued
 * from them (stored tokens, refresh families, grants; JWTs through the session's revocation
 * record), so introspection, refresh and `prompt=none` all see the logout at once.
 */
export async function performLogout(
  inst: Engine,
  opts: { userAgentId: string; userId: string | null; clientId: string | null; actor: Actor; via: string },
): Promise<Session[]> {
  const ids = opts.userId ? await inst.store.sessions.openIdsOfUser(opts.userAgentId, opts.userId) : undefined;
  if (ids && !ids.length) return [];
  // One transaction: a session is never ended with its tokens still live, or the other way round.
  return inst.store.transaction(async (tx) => {
    const ended = await tx.sessions.end(opts.userAgentId, ids);
    for (const s of ended) {
      await tx.grants.revokeSessionTokens(s.id, "logout");
      await tx.audit.record(
        { type: "user", id: s.userId, ip: opts.actor.ip, userAgent: opts.actor.userAgent },
        { action: "session.ended", targetType: "session", targetId: s.id, clientId: opts.clientId, details: { reason: "logout", via: opts.via } },
      );
    }
    return ended;
  });
}

/** Our own pages are named by path; the browser is sent to them on the issuer's origin. */
export function onIssuer(issuer: string, location: string): string {
  return location.startsWith("/") ? issuer + location : location;
}

function redirect(issuer: string, location: string, method: string, cookies: string[] = []): Response {
  // 303 turns a POSTed logout into a GET of the next page; a GET keeps the usual 302.
  return (method === "POST" ? seeOther : found)(onIssuer(issuer, location), cookies);
}

export function errorLocation(reason: LogoutError): string {
  return `${LOGOUT_PATHS.error}?reason=${reason}`;
}

/** The post-logout URI with `state` added unmodified (RP-Initiated Logout 1.0, 3). */
export function postLogoutLocation(uri: string, state: string | undefined): string {
  if (state === undefined) return uri;
  const u = new URL(uri);
  u.searchParams.set("state", state);
  return u.toString();
}

type Decision = {
  client: Client | null;
  hint: IdTokenHint | null;
  /** The checked post-logout redirect (with state), or null for the signed-out page. */
  redirect: string | null;
  /**
   * Whose sessions end: `all` of the user agent, or those of the user a logout_hint names
   * (`userId` null when it names nobody, which then matches no session, exactly like a user who is
   * not signed in here: the answer must not tell whether the name exists).
   */
  only: "all" | { userId: string | null };
};

/**
 * The rules of spec 4.7 and RP-Initiated Logout 1.0 2-3, in order: a hint must carry our valid
 * signature; a client_id next to it must name the same client; the redirect URI is checked
 * against the client so named, and ignored when no client is named; a URI that fails the check
 * is not followed (the signed-out page is shown instead, never an open redirect).
 */
async function decide(inst: Engine, p: Params, primaryDomain: string): Promise<Decision> {
  let hint: IdTokenHint | null = null;
  if (p.id_token_hint) {
    hint = (await verifyIdTokenHint(inst, p.id_token_hint)) ?? null;
    if (!hint) throw new Refused("invalidHint");
  }
  if (hint && p.client_id !== undefined && p.client_id !== hint.azp) throw new Refused("clientMismatch");

  let client: Client | null = null;
  const clientId = hint?.azp ?? p.client_id;
  if (clientId) {
    client = (clientId.length <= 200 ? await inst.store.clients.get(clientId) : undefined) ?? null;
    // A client_id that names nobody is a broken request; a hint whose client was deleted since
    // is still a good hint, it just has no redirect URIs left.
    if (!client && !hint) throw new Refused("unknownClient");
  }

  let redirectTo: string | null = null;
  const uri = p.post_logout_redirect_uri;
  if (uri && client && client.postLogoutRedirectUris.includes(uri)) redirectTo = postLogoutLocation(uri, p.state);

  let only: Decision["only"] = "all";
  if (p.logout_hint) {
    const user = p.logout_hint.length <= 320 ? await inst.store.users.findByLoginName(p.logout_hint, primaryDomain) : undefined;
    // A logout_hint for anyone but the ID token's subject is contradictory, whether or not that
    // name exists: both get the same refusal, so the answer says nothing about existence.
    if (hint && user?.id !== hint.sub) throw new Refused("userMismatch");
    only = { userId: user?.id ?? null };
  }
  return { client, hint, redirect: redirectTo, only };
}

/**
 * GET and POST /oidc/v1/end_session (RP-Initiated Logout 1.0). The request is tied to its
 * client, and the logout happens at once, only when it carries a valid id_token_hint for a user
 * signed in in this browser; otherwise (a bare link any site could embed) the user confirms on
 * a CSRF-protected page first. Errors go to an error page and are never redirected.
 */
export async function handleEndSession(inst: Engine, request: HttpRequest): Promise<Response> {
  if (request.method !== "GET" && request.method !== "POST") {
    return new Response(null, { status: 405, headers: { Allow: "GET, POST", "Cache-Control": "no-store" } });
  }
  const issuer = inst.config.issuer;
  try {
    const p = await readParams(request);
    const settings = await inst.store.settings.get();
    const cookies: string[] = [];
    if (p.ui_locales) {
      const locale = resolveLocale({ uiLocales: p.ui_locales, acceptLanguage: request.headers.get("accept-language"), defaultLocale: settings.defaultLocale });
      cookies.push(localeCookie(issuer, locale));
    }
    const d = await decide(inst, p, settings.primaryDomain);
    const done = (r: string | null) => redirect(issuer, r ?? LOGOUT_PATHS.signedOut, request.method, cookies);

    const ua = await userAgentOfRequest(inst.store, issuer, request);
    if (!ua) return done(d.redirect);
    const only = d.only;
    const live = (await inst.store.sessions.live(ua.id)).filter((s) => only === "all" || s.userId === only.userId);
    const userId = only === "all" ? null : only.userId;
    // A logout_hint naming nobody: nothing to end, the same answer as for a user not signed in here.
    if (only !== "all" && only.userId === null) return done(d.redirect);
    // RP-Initiated Logout 1.0 §2: without asking only when the ID token belongs to a session of
    // this browser, by its `sid`; an ID token without one (no session behind it) by its user.
    // Another session of the same user (another browser's ID token) is asked about.
    const hint = d.hint;
    const tied = hint !== null && live.some((s) => (hint.sid ? s.id === hint.sid : s.userId === hint.sub));
    if (live.length && !tied) {
      const sealed = sealPendingLogout(inst.masterKey, { ua: ua.id, client: d.client?.id ?? null, user: userId, redirect: d.redirect }, inst.clock.now());
      return redirect(issuer, `${LOGOUT_PATHS.confirm}?request=${encodeURIComponent(sealed)}`, request.method, cookies);
    }
    await performLogout(inst, {
      userAgentId: ua.id,
      userId,
      clientId: d.client?.id ?? null,
      actor: { ip: clientAddress(request), userAgent: request.headers.get("user-agent") },
      via: "end_session",
    });
    return done(d.redirect);
  } catch (err) {
    if (err instanceof BodyTooLarge) return bodyTooLargeResponse();
    if (err instanceof Refused) return redirect(issuer, errorLocation(err.reason), request.method);
    const e = unexpectedOAuthError(inst.log, err, { in: "end_session" });
    // A database out of reach is no bad request: the browser is asked to try again, in its language.
    if (e instanceof TemporarilyUnavailable) {
      return unavailablePage({ cookie: request.headers.get("cookie"), acceptLanguage: request.headers.get("accept-language"), headers: e.headers });
    }
    return redirect(issuer, errorLocation("badRequest"), request.method);
  }
}
