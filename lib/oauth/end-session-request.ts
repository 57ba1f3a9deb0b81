import { constantTimeEqual, hmac } from "@/lib/crypto";

/**
 * A logout waiting for the user's confirmation, carried by the confirmation page instead of
 * stored: what end_session already decided (whose sessions end, where to go afterwards),
 * bound to one user agent and MACed under the master key, so it cannot be forged, altered or
 * replayed from another browser, and short-lived.
 */
export type PendingLogout = {
  /** The user agent whose sessions end. */
  ua: string;
  /** The client the request named, for the page and the audit trail. */
  client: string | null;
  /** Only the user whose sessions end (logout_hint); all of the user agent's when null. */
  user: string | null;
  /** The already checked post-logout redirect, with `state`; the signed-out page when null. */
  redirect: string | null;
  /** Unix seconds. */
  exp: number;
};

export const PENDING_LOGOUT_SECONDS = 600;

const mac = (masterKey: Buffer, body: string) => hmac(masterKey, `logout-request:${body}`);

export function sealPendingLogout(masterKey: Buffer, p: Omit<PendingLogout, "exp">, now: number): string {
  const body = Buffer.from(JSON.stringify({ ...p, exp: Math.floor(now / 1000) + PENDING_LOGOUT_SECONDS })).toString("base64url");
  return `${body}.${mac(masterKey, body)}`;
}

/** The pending logout if `sealed` is intact, unexpired and belongs to `userAgentId`. */
export function openPendingLogout(masterKey: Buffer, sealed: string, userAgentId: string, now: number): PendingLogout | undefined {
  if (sealed.length > 8192) return undefined;
  const [body, tag, ...rest] = sealed.split(".");
  if (!body || !tag || rest.length || !constantTimeEqual(mac(masterKey, body), tag)) return undefined;
  let p: PendingLogout;
  try {
    p = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as PendingLogout;
  } catch {
    return undefined;
  }
  if (typeof p.exp !== "number" || p.exp * 1000 <= now) return undefined;
  if (typeof p.ua !== "string" || !constantTimeEqual(p.ua, userAgentId)) return undefined;
  return p;
}

/** CSRF token of the confirmation form: tied to the user agent and to this very request. */
export function logoutCsrf(masterKey: Buffer, userAgentId: string, sealed: string): string {
  return hmac(masterKey, `logout-csrf:${userAgentId}:${sealed}`);
}

export function verifyLogoutCsrf(masterKey: Buffer, userAgentId: string, sealed: string, presented: unknown): boolean {
  return typeof presented === "string" && presented !== "" && constantTimeEqual(logoutCsrf(masterKey, userAgentId, sealed), presented);
}
