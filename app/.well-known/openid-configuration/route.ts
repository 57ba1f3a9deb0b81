import { withEngine } from "@torii/core/runtime";
import { handleDiscovery } from "@torii/core/oauth/discovery-endpoint";

// The same Web handler that server.ts serves directly (docs/architecture.md, "A token request").
export const dynamic = "force-dynamic";
export const GET = withEngine(handleDiscovery);
export const HEAD = withEngine(handleDiscovery);
export const OPTIONS = withEngine(handleDiscovery);
