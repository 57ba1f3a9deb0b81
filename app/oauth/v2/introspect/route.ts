import { withEngine } from "@torii/core/runtime";
import { handleIntrospect } from "@torii/core/oauth/introspect";

// The same Web handler that server.ts serves directly (docs/architecture.md, "A token request").
export const dynamic = "force-dynamic";
export const POST = withEngine(handleIntrospect);
export const GET = withEngine(handleIntrospect);
export const OPTIONS = withEngine(handleIntrospect);
