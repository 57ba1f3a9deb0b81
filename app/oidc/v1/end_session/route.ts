import { withEngine } from "@torii/core/runtime";
import { handleEndSession } from "@torii/core/oauth/end-session";

// Browser-facing (it reads the user agent cookie), so it stays in Next (DESIGN.md, "the hot path").
export const dynamic = "force-dynamic";
export const GET = withEngine(handleEndSession);
export const POST = withEngine(handleEndSession);
