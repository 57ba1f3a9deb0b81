import type { Engine } from "@/lib/engine";
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

/** A core handler: the engine of this process, and the Web request. */
export type WebHandler = (engine: Engine, request: Request) => Promise<Response>;

/**
 * The back-channel endpoints that server.ts serves directly, outside Next's request pipeline
 * (docs/architecture.md, "A token request"). The same handlers are exported by the App Router route files.
 */
export const FAST_ROUTES: Record<string, WebHandler> = {
  [PATHS.discovery]: handleDiscovery,
  [PATHS.keys]: handleKeys,
  [PATHS.token]: handleToken,
  [PATHS.introspect]: handleIntrospect,
  [PATHS.revoke]: handleRevoke,
  [PATHS.userinfo]: handleUserinfo,
  "/healthz": handleHealthz,
  "/readyz": handleReadyz,
  // Not hot, but served here so that its own restrictive CSP (an SVG is a document) is the one sent.
  "/ui/branding/logo": handleBrandingLogo,
  "/favicon.ico": handleFavicon,
};

/** Prefix-mounted handlers (the management API). */
export const FAST_PREFIXES: [string, WebHandler][] = [["/management/v1", handleManagement]];

export function fastHandlerFor(pathname: string): WebHandler | undefined {
  const exact = FAST_ROUTES[pathname];
  if (exact) return exact;
  for (const [prefix, handler] of FAST_PREFIXES) if (pathname === prefix || pathname.startsWith(prefix + "/")) return handler;
  return undefined;
}
