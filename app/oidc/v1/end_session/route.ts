import { withEngine } from "@torii/core/runtime";
import { handleEndSession } from "@torii/core/oauth/end-session";

// server.ts serves it directly in production (lib/server/routes.ts, BROWSER_ROUTES); this route serves `next dev`.
export const dynamic = "force-dynamic";
export const GET = withEngine(handleEndSession);
export const POST = withEngine(handleEndSession);
