import { withEngine } from "@torii/core/runtime";
import { handleDiscovery } from "@torii/core/oauth/discovery-endpoint";

// The same Web handler that server.ts serves directly (DESIGN.md, "the hot path").
export const dynamic = "force-dynamic";
export const GET = withEngine(handleDiscovery);
export const HEAD = withEngine(handleDiscovery);
