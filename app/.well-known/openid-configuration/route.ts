import { handleDiscovery } from "@/lib/oauth/discovery-endpoint";

// The same Web handler that server.ts serves directly (DESIGN.md, "the hot path").
export const dynamic = "force-dynamic";
export const GET = handleDiscovery;
export const HEAD = handleDiscovery;
