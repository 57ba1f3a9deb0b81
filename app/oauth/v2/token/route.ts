import { withEngine } from "@torii/core/runtime";
import { handleToken } from "@torii/core/oauth/token-endpoint";

// The same Web handler that server.ts serves directly (DESIGN.md, "the hot path").
export const dynamic = "force-dynamic";
export const POST = withEngine(handleToken);
export const GET = withEngine(handleToken);
