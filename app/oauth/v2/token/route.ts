import { withEngine } from "@torii/core/runtime";
import { handleToken } from "@torii/core/oauth/token-endpoint";

// The same Web handler that server.ts serves directly (docs/architecture.md, "A token request").
export const dynamic = "force-dynamic";
export const POST = withEngine(handleToken);
export const GET = withEngine(handleToken);
export const OPTIONS = withEngine(handleToken);
