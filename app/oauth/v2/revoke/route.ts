import { withEngine } from "@torii/core/runtime";
import { handleRevoke } from "@torii/core/oauth/revoke";

// The same Web handler that server.ts serves directly (DESIGN.md, "the hot path").
export const dynamic = "force-dynamic";
export const POST = withEngine(handleRevoke);
export const GET = withEngine(handleRevoke);
