import { withEngine } from "@torii/core/runtime";
import { handleIntrospect } from "@torii/core/oauth/introspect";

// The same Web handler that server.ts serves directly (DESIGN.md, "the hot path").
export const dynamic = "force-dynamic";
export const POST = withEngine(handleIntrospect);
export const GET = withEngine(handleIntrospect);
