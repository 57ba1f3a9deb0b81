import type { IncomingHttpHeaders } from "node:http";

/**
 * The first look at every request, before any handler or Next sees it. Requests that no handler
 * can answer sensibly (methods nobody serves, request targets that are not a path, a body larger
 * than the server reads, a forged server-action origin) get their final answer here, so that
 * they never reach code that would fail on them with a 500 and a stack trace in the log.
 */

export type Refusal = { status: number; message: string; headers?: Record<string, string> };

/** A check of a request Next would serve, made before Next sees it. */
export type PageScreen = (headers: IncomingHttpHeaders) => Refusal | null;

/** Methods some endpoint serves (RFC 9110 9.3); the management API uses PUT, PATCH and DELETE. */
const SERVED = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
/** Methods known to HTTP that no endpoint serves: 405. Anything else is unknown to us: 501 (RFC 9110 15.6.2). */
const KNOWN_UNSERVED = new Set(["TRACE", "CONNECT", "TRACK", "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "QUERY"]);
const ALLOW = [...SERVED].join(", ");

export type Screened = { refusal: Refusal } | { url: string };

/**
 * Checks the request line. Returns the origin-form target to serve (`/path?query`) or the refusal.
 * `issuerHost` is the host (with port) of the issuer: an absolute-form target (RFC 9112 3.2.2)
 * naming it is served as its path, one naming any other host is refused, never redirected to.
 */
export function screenRequestLine(method: string | undefined, target: string | undefined, issuerHost: string): Screened {
  const m = method ?? "";
  if (!SERVED.has(m)) {
    if (KNOWN_UNSERVED.has(m)) return { refusal: { status: 405, message: `The method ${m} is not allowed.`, headers: { Allow: ALLOW } } };
    return { refusal: { status: 501, message: "The request method is not supported." } };
  }
  let url = target ?? "";
  if (url === "*") {
    // Asterisk-form is only for a server-wide OPTIONS (RFC 9112 3.2.4).
    if (m === "OPTIONS") return { refusal: { status: 204, message: "", headers: { Allow: ALLOW } } };
    return { refusal: { status: 400, message: "The request target must be a path." } };
  }
  if (!url.startsWith("/")) {
    let absolute: URL | undefined;
    try {
      absolute = /^https?:\/\//i.test(url) ? new URL(url) : undefined;
    } catch {
      absolute = undefined;
    }
    if (!absolute || absolute.host.toLowerCase() !== issuerHost.toLowerCase() || absolute.username || absolute.password) {
      return { refusal: { status: 400, message: "The request target must be a path on this server." } };
    }
    url = absolute.pathname + absolute.search;
  }
  // "//host/x" would read as a network-path reference to whoever builds a URL from it.
  if (url.startsWith("//")) return { refusal: { status: 400, message: "The request path is malformed." } };
  const path = url.split("?")[0]!;
  try {
    decodeURIComponent(path);
  } catch {
    return { refusal: { status: 400, message: "The request path is malformed." } };
  }
  return { url };
}

/** What a page (anything Next serves) answers: it is read, and its forms and actions post. */
const PAGE_METHODS = ["GET", "HEAD", "POST"];
const PAGE_ALLOW = [...PAGE_METHODS, "OPTIONS"].join(", ");

/**
 * The methods of a request Next would serve. Next renders a page for PUT, PATCH or DELETE as for
 * GET, and answers OPTIONS with a 400: refused with 405 and answered with 204 here, `Allow`
 * naming what a page serves (the methods of the API routes are served before Next, by their own
 * handlers).
 */
export function screenPageMethod(method: string): Refusal | null {
  if (PAGE_METHODS.includes(method)) return null;
  if (method === "OPTIONS") return { status: 204, message: "", headers: { Allow: PAGE_ALLOW } };
  return { status: 405, message: `The method ${method} is not allowed here.`, headers: { Allow: PAGE_ALLOW } };
}

/** A declared body larger than the server reads is refused before a byte of it is read. */
export function screenDeclaredLength(headers: IncomingHttpHeaders, limit: number): Refusal | null {
  const declared = headers["content-length"];
  if (declared === undefined) return null;
  if (!/^\d+$/.test(declared)) return { status: 400, message: "The Content-Length header is malformed." };
  if (Number(declared) > limit) return { status: 413, message: "Request body too large." };
  return null;
}

export const isMultipart = (headers: IncomingHttpHeaders): boolean =>
  (headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase() === "multipart/form-data";

/**
 * A body Next decodes as a server action's (and whose origin it checks): every multipart POST,
 * and any POST naming an action (`Next-Action`). form-screen.ts checks such bodies.
 */
export function isActionBody(method: string, headers: IncomingHttpHeaders): boolean {
  return method === "POST" && (isMultipart(headers) || headers["next-action"] !== undefined);
}

/** What a refused request is told: an OAuth-style error body (RFC 6749 5.2's shape). */
export function refusalBody(refusal: Refusal, path = ""): string {
  // In the error shape of the endpoint's family: the management API's `{error, message}`, OAuth's elsewhere.
  if (path.startsWith("/management/")) return JSON.stringify({ error: "invalid_request", message: refusal.message });
  return JSON.stringify({ error: "invalid_request", error_description: refusal.message });
}

/**
 * Next answers a server action whose `Origin` does not match the host with a 500 (and an
 * unparsable `Origin` with an uncaught exception). The same comparison Next makes, answered 403:
 * a request that may be a server action (RFC 6454 `Origin` present) must come from this host.
 */
export function screenServerActionOrigin(method: string, headers: IncomingHttpHeaders): Refusal | null {
  const origin = headers.origin;
  if (!isActionBody(method, headers) || origin === undefined) return null;
  const forwarded = (Array.isArray(headers["x-forwarded-host"]) ? headers["x-forwarded-host"][0] : headers["x-forwarded-host"])?.split(",")[0]?.trim();
  const host = forwarded || headers.host;
  let originHost: string | null = null;
  try {
    originHost = origin === "null" ? null : new URL(origin).host;
  } catch {
    originHost = null;
  }
  if (originHost && host && originHost === host) return null;
  return { status: 403, message: "The request's origin is not allowed." };
}

/**
 * Next answers a `Next-Router-State-Tree` header it cannot parse (a page's client router sends
 * it with `RSC: 1`) with a 500 and a logged stack, on every page and without a session. This
 * refuses such a request with 400 first, judged by `validate`: Next's own parser (server.ts hands
 * it in, so that this module stays free of Next), which throws on what Next would fail on.
 */
export function routerStateScreen(validate: (header: string | string[] | undefined) => unknown): PageScreen {
  return (headers) => {
    const header = headers["next-router-state-tree"];
    if (header === undefined) return null;
    try {
      validate(header);
      return null;
    } catch {
      return { status: 400, message: "The Next-Router-State-Tree header is malformed." };
    }
  };
}
