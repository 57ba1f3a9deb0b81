/**
 * Security headers, defined once: server.ts applies them to everything it serves and
 * next.config.ts to what Next serves (also under `next dev`).
 */

/** Pages: own origin only, never framed. Next's hydration needs inline scripts. */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** JSON and other non-HTML responses: nothing may load or frame them. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

export function commonSecurityHeaders(issuer: string): Record<string, string> {
  const h: Record<string, string> = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
  };
  if (issuer.startsWith("https://")) h["Strict-Transport-Security"] = "max-age=63072000; includeSubDomains";
  return h;
}
