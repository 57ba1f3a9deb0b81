import { withEngine } from "@torii/core/runtime";
import { handleRevoke } from "@torii/core/oauth/revoke";

// The same Web handler that server.ts serves directly (docs/architecture.md, "A token request").
export const dynamic = "force-dynamic";
export const POST = withEngine(handleRevoke);
export const GET = withEngine(handleRevoke);
export const OPTIONS = withEngine(handleRevoke);
