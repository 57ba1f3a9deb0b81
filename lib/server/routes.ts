import type { Engine } from "@/lib/engine";
import type { HttpRequest } from "@/lib/http/request";
import { methodNotAllowed } from "@/lib/http/responses";
import { handleHealthz, handleReadyz } from "@/lib/server/health";
import { handleBrandingLogo, handleFavicon } from "@/lib/management/logo-endpoint";
import { handleManagement } from "@/lib/management/router";
import { handleDiscovery } from "@/lib/oauth/discovery-endpoint";
import { PATHS } from "@/lib/oauth/endpoints";
import { handleIntrospect } from "@/lib/oauth/introspect";
import { handleKeys } from "@/lib/oauth/keys-endpoint";
import { handleRevoke } from "@/lib/oauth/revoke";
import { handleToken } from "@/lib/oauth/token-endpoint";
import { handleUserinfo } from "@/lib/oauth/userinfo";
import { handleAuthorize, handleAuthorizeCallback } from "@/lib/oauth/authorize";
import { handleEndSession } from "@/lib/oauth/end-session";
import { CHANGE_PASSWORD_URL, handleChangePasswordUrl } from "@/lib/account/change-password-url";
import { handleUnknownEndpoint, isUnderApiPrefix } from "./unknown-endpoint";

/** A core handler: the engine of this process, and the request (a Web `Request` or the server's lighter one). */
export type WebHandler = (engine: Engine, request: HttpRequest) => Promise<Response>;

/**
 * The back-channel endpoints that server.ts serves directly, outside Next's request pipeline
 * (docs/architecture.md, "A token request"). The same handlers are exported by the App Router route files.
 */
export const FAST_ROUTES: Record<string, WebHandler> = {
  [PATHS.discovery]: handleDiscovery,
  [PATHS.authorizationServerMetadata]: handleDiscovery,
  [PATHS.keys]: handleKeys,
  [PATHS.token]: handleToken,
  [PATHS.introspect]: handleIntrospect,
  [PATHS.revoke]: handleRevoke,
  [PATHS.userinfo]: handleUserinfo,
  // A probe GETs (or HEADs) them; another method is refused as Next refuses it, not answered.
  "/healthz": withMethods(["GET"], handleHealthz),
  "/readyz": withMethods(["GET"], handleReadyz),
  // Not hot, but served here so that its own restrictive CSP (an SVG is a document) is the one sent.
  "/ui/branding/logo": handleBrandingLogo,
  "/favicon.ico": handleFavicon,
};

/**
 * The browser endpoints a relying party sends its users to, also served directly: they answer
 * with redirects (or their own small pages, each with its own CSP), never with a Next page, so
 * Next's request pipeline would only add its cost to every sign-in (the code flow of `npm run
 * bench`). Their App Router routes still serve them under `next dev`. A method the route does
 * not export is refused as Next refuses it (405 with `Allow`); HEAD is answered as GET is, except
 * where a GET changes something (end_session).
 */
export const BROWSER_ROUTES: Record<string, { methods: readonly string[]; handler: WebHandler; headAsGet?: false }> = {
  [PATHS.authorize]: { methods: ["GET", "POST"], handler: handleAuthorize },
  [`${PATHS.authorize}/callback`]: { methods: ["GET"], handler: handleAuthorizeCallback },
  // A GET with a valid id_token_hint signs the browser out: a HEAD (a link checker's, say) must
  // not, so HEAD is refused here, as the handler itself refuses it under `next dev`.
  [PATHS.endSession]: { methods: ["GET", "POST"], handler: handleEndSession, headAsGet: false },
  [CHANGE_PASSWORD_URL]: { methods: ["GET"], handler: handleChangePasswordUrl },
};

/**
 * Serves `methods` (and HEAD as GET, unless told not to), answers OPTIONS with them, and refuses
 * any other method with 405; `Allow` always names exactly what is served.
 */
function withMethods(methods: readonly string[], handler: WebHandler, headAsGet = true): WebHandler {
  const head = headAsGet && methods.includes("GET");
  const allowed = [...methods, ...(head ? ["HEAD"] : []), "OPTIONS"];
  return (engine, request) => {
    if (methods.includes(request.method) || (request.method === "HEAD" && head)) return handler(engine, request);
    if (request.method === "OPTIONS") return Promise.resolve(new Response(null, { status: 204, headers: { Allow: allowed.join(", ") } }));
    return Promise.resolve(methodNotAllowed(allowed));
  };
}

const BROWSER_HANDLERS: Record<string, WebHandler> = Object.fromEntries(
  Object.entries(BROWSER_ROUTES).map(([path, r]) => [path, withMethods(r.methods, r.handler, r.headAsGet)]),
);

/** Prefix-mounted handlers (the management API). */
export const FAST_PREFIXES: [string, WebHandler][] = [["/management/v1", handleManagement]];

export function fastHandlerFor(pathname: string): WebHandler | undefined {
  const exact = FAST_ROUTES[pathname] ?? BROWSER_HANDLERS[pathname];
  if (exact) return exact;
  for (const [prefix, handler] of FAST_PREFIXES) if (pathname === prefix || pathname.startsWith(prefix + "/")) return handler;
  // Nothing else lives under the API's prefixes: answered here, not by Next's page for a 404.
  if (isUnderApiPrefix(pathname)) return handleUnknownEndpoint;
  return undefined;
}
