/**
 * Security headers, defined once: server.ts applies them to everything it serves and
 * next.config.ts to what Next serves (also under `next dev`).
 */

/**
 * Pages: own origin only, never framed. Next's hydration needs inline scripts: in production the
 * server entry gives every page request a fresh nonce (Next reads it from the request's CSP header
 * and stamps its own scripts with it), so no other inline script runs. `next dev` has no such
 * entry and gets the `'unsafe-inline'` variant, plus `'unsafe-eval'`, which React's development
 * build needs (it rebuilds server stack traces with eval); production never allows eval.
 * (The development server's websocket is same-origin, which `connect-src 'self'` allows.)
 */
export function pageCsp(nonce?: string, { development = false } = {}): string {
  return [
    "default-src 'self'",
    nonce ? `script-src 'self' 'nonce-${nonce}'` : `script-src 'self' 'unsafe-inline'${development ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** `next dev` only (next.config.ts). */
export const DEV_PAGE_CSP = pageCsp(undefined, { development: true });

/** JSON and other non-HTML responses: nothing may load or frame them. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/**
 * The first path segments under which only programs' endpoints live, all answered with
 * `API_CSP` (next.config.ts) and, where nothing is there, a JSON 404 (lib/server/unknown-endpoint.ts).
 */
export const API_PATH_SEGMENTS = ["oauth", "oidc", "management", ".well-known"] as const;

export function commonSecurityHeaders(issuer: string): Record<string, string> {
  const h: Record<string, string> = {
    "X-Content-Type-Options": "nosniff",
    // Nothing leaves for other origins. Same-origin requests keep it, because under
    // `no-referrer` browsers send `Origin: null` with form posts, and Next refuses a server
    // action (the console's forms without JavaScript) whose Origin is not its own host.
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
  };
  if (issuer.startsWith("https://")) h["Strict-Transport-Security"] = "max-age=63072000; includeSubDomains";
  return h;
}

/**
 * The authorization endpoint (and its callback) sets its own CSP on every response: its error
 * page and form_post page allow exactly their own inline style and script by hash. A second,
 * stricter policy added on top would block them (browsers enforce every policy they receive).
 */
export const SELF_CSP_PREFIX = "/oauth/v2/authorize";

export function setsOwnCsp(pathname: string): boolean {
  return pathname === SELF_CSP_PREFIX || pathname.startsWith(SELF_CSP_PREFIX + "/");
}
