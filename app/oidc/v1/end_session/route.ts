import { withEngine } from "@torii/core/runtime";
import { handleEndSession } from "@torii/core/oauth/end-session";

// Browser-facing (it reads the user agent cookie), so it stays in Next (docs/architecture.md, "A token request").
export const dynamic = "force-dynamic";
export const GET = withEngine(handleEndSession);
export const POST = withEngine(handleEndSession);
