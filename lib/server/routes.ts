import { handleHealthz, handleReadyz } from "@/lib/http/health";
import { handleDiscovery } from "@/lib/oauth/discovery-endpoint";
import { PATHS } from "@/lib/oauth/endpoints";
import { handleKeys } from "@/lib/oauth/keys-endpoint";

export type WebHandler = (request: Request) => Promise<Response>;

/**
 * The back-channel endpoints that server.ts serves directly, outside Next's request pipeline
 * (DESIGN.md, "the hot path"). The same handlers are exported by the App Router route files.
 */
export const FAST_ROUTES: Record<string, WebHandler> = {
  [PATHS.discovery]: handleDiscovery,
  [PATHS.keys]: handleKeys,
  "/healthz": handleHealthz,
  "/readyz": handleReadyz,
};

/** Prefix-mounted handlers (the management API). */
export const FAST_PREFIXES: [string, WebHandler][] = [];

export function fastHandlerFor(pathname: string): WebHandler | undefined {
  const exact = FAST_ROUTES[pathname];
  if (exact) return exact;
  for (const [prefix, handler] of FAST_PREFIXES) if (pathname === prefix || pathname.startsWith(prefix + "/")) return handler;
  return undefined;
}
