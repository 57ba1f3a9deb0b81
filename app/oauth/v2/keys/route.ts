import { withEngine } from "@torii/core/runtime";
import { handleKeys } from "@torii/core/oauth/keys-endpoint";

// The same Web handler that server.ts serves directly (DESIGN.md, "the hot path").
export const dynamic = "force-dynamic";
export const GET = withEngine(handleKeys);
export const HEAD = withEngine(handleKeys);
