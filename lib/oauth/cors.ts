import type { Engine } from "@/lib/engine";
import { appendHeader, backChannel, setHeader } from "@/lib/http/responses";
import type { Client, ClientOrigins } from "@/lib/store/clients";
import type { HttpRequest } from "@/lib/http/request";

/**
 * CORS for browser applications (single-page apps calling the token, revocation, userinfo and
 * introspection endpoints from their own origin).
 *
 * - A response carries `Access-Control-Allow-Origin` only when the request's `Origin` is one of
 *   the web origins of the client the request is about: the authenticated client (token,
 *   revocation, introspection) or the access token's client (userinfo). Everything else gets no
 *   CORS header, so the browser keeps the answer from the page.
 * - A client's web origins are its `allowedOrigins`, or, when it has none set (null), the origins
 *   of its http(s) redirect URIs: an SPA registered with its redirect URI works as it is.
 * - Never `Access-Control-Allow-Credentials`: these endpoints take no cookies, and a page must
 *   not be able to send the user's.
 * - A preflight (`OPTIONS`) cannot know the client yet (the body is not sent), so it admits any
 *   origin for the methods and headers the endpoint takes; what the page may read is decided on
 *   the actual response. That opens nothing: a script elsewhere can send the same request
 *   without a browser, and without the user's cookies either way.
 */

const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** The origins of a client's http(s) redirect URIs: what it may use when none are set. */
export function redirectUriOrigins(redirectUris: readonly string[]): string[] {
  const out = new Set<string>();
  for (const uri of redirectUris) {
    try {
      const u = new URL(uri);
      if (u.protocol === "https:" || u.protocol === "http:") out.add(u.origin);
    } catch {
      // a registered URI is always absolute; nothing to derive from one that is not
    }
  }
  return [...out];
}

/** The web origins a client's pages may call these endpoints from. */
export function webOriginsOf(client: Pick<Client, "allowedOrigins" | "redirectUris">): string[] {
  return client.allowedOrigins ?? redirectUriOrigins(client.redirectUris);
}

/** What a handler tells the CORS layer: the client whose origins decide. */
export type CorsScope = { client?: Pick<Client, "allowedOrigins" | "redirectUris"> };

type ScopedHandler = (engine: Engine, request: HttpRequest, cors: CorsScope) => Promise<Response>;

/**
 * Wraps a back-channel endpoint: answers its preflight, runs it (errors become OAuth error
 * responses as for every back-channel endpoint), then adds the CORS headers the client allows.
 */
export function corsEndpoint(methods: readonly string[], handler: ScopedHandler) {
  return async (engine: Engine, request: HttpRequest): Promise<Response> => {
    const origin = request.headers.get("origin");
    if (request.method === "OPTIONS") return answerPreflight(request, methods);
    const cors: CorsScope = {};
    const response = await backChannel((e: Engine, r: HttpRequest) => handler(e, r, cors))(engine, request);
    // The answer depends on Origin: caches must keep one per origin. (Through the record of a
    // JSON answer: reading `response.headers` would make undici's Headers on every call.)
    appendHeader(response, "Vary", "Origin");
    if (origin && (cors.client ? webOriginsOf(cors.client).includes(origin) : response.status >= 400 && (await anyClientOrigin(engine, origin)))) {
      setHeader(response, "Access-Control-Allow-Origin", origin);
      setHeader(response, "Access-Control-Expose-Headers", "WWW-Authenticate, Retry-After");
    }
    return response;
  };
}

// The origins of all clients, by the cached list they come from (a new list after any change).
const allOrigins = new WeakMap<readonly ClientOrigins[], ReadonlySet<string>>();

/**
 * An error that names no client (an expired or unknown token at userinfo, a client that failed to
 * authenticate) is readable by the pages of every registered client's origins: otherwise the
 * browser hides it, and a single-page app sees a network failure where the answer is "401, get a
 * new token". Such an answer tells nothing about any client or user.
 */
async function anyClientOrigin(engine: Engine, origin: string): Promise<boolean> {
  let list: readonly ClientOrigins[];
  try {
    list = await engine.store.clients.origins();
  } catch {
    return false; // the database out of reach: the error itself is what the request gets
  }
  let set = allOrigins.get(list);
  if (!set) allOrigins.set(list, (set = new Set(list.flatMap(webOriginsOf))));
  return set.has(origin);
}

/** Headers a page may send to these endpoints. */
const ALLOWED_HEADERS = ["authorization", "content-type", "accept", "accept-language"];

/**
 * An OPTIONS request: a CORS preflight for `methods` from any origin, as above, or (without
 * `Origin`) just what the endpoint allows. The key set and discovery, readable by every origin,
 * answer theirs here too: a page that adds a header to its GET asks first.
 */
export function answerPreflight(request: HttpRequest, methods: readonly string[]): Response {
  const origin = request.headers.get("origin");
  if (!origin) return new Response(null, { status: 204, headers: { Allow: [...methods, "OPTIONS"].join(", ") } });
  return new Response(null, {
    status: 204,
    headers: {
      "Access-Control-Allow-Origin": origin,
      "Access-Control-Allow-Methods": methods.join(", "),
      // The browser compares what it wants to send with this list and stops if one is missing.
      "Access-Control-Allow-Headers": ALLOWED_HEADERS.join(", "),
      "Access-Control-Max-Age": String(PREFLIGHT_MAX_AGE_SECONDS),
      Vary: "Origin",
      "Cache-Control": "no-store",
    },
  });
}
