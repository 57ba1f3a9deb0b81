import type { HttpRequest } from "@/lib/http/request";
import { LOCALE_COOKIE } from "@/lib/i18n/locales";

/** Cookie parsing and serialising for framework-free handlers (they read the request itself). */

export function parseCookies(header: string | null | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i < 0) continue;
    const name = part.slice(0, i).trim();
    if (!name || out.has(name)) continue;
    let value = part.slice(i + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      out.set(name, decodeURIComponent(value));
    } catch {
      out.set(name, value);
    }
  }
  return out;
}

export function requestCookie(request: HttpRequest, name: string): string | undefined {
  return parseCookies(request.headers.get("cookie")).get(name);
}

export type CookieOptions = {
  maxAge?: number;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: "Lax" | "Strict" | "None";
  path?: string;
};

export function serializeCookie(name: string, value: string, o: CookieOptions = {}): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${o.path ?? "/"}`];
  if (o.maxAge !== undefined) parts.push(`Max-Age=${Math.floor(o.maxAge)}`);
  if (o.httpOnly ?? true) parts.push("HttpOnly");
  if (o.secure) parts.push("Secure");
  parts.push(`SameSite=${o.sameSite ?? "Lax"}`);
  return parts.join("; ");
}

/**
 * The cookie that pins the pages' language (LOCALE_COOKIE) for this browser: set by an
 * authorization's or logout's `ui_locales` and by the profile's language; `null` unpins it, so
 * that Accept-Language decides again.
 */
export function localeCookie(issuer: string, locale: string | null): string {
  const o = { sameSite: "Lax", secure: issuer.startsWith("https://") } as const;
  return locale ? serializeCookie(LOCALE_COOKIE, locale, o) : serializeCookie(LOCALE_COOKIE, "", { ...o, maxAge: 0 });
}
