import { withEngine } from "@torii/core/runtime";
import { handleDiscovery } from "@torii/core/oauth/discovery-endpoint";

// RFC 8414's name for the discovery document: the same Web handler, which server.ts serves
// directly (docs/architecture.md, "A token request").
export const dynamic = "force-dynamic";
export const GET = withEngine(handleDiscovery);
export const HEAD = withEngine(handleDiscovery);
export const OPTIONS = withEngine(handleDiscovery);
