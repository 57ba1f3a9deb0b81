import { handleEndSession } from "@/lib/oauth/end-session";

// Browser-facing (it reads the user agent cookie), so it stays in Next (DESIGN.md, "the hot path").
export const dynamic = "force-dynamic";
export const GET = handleEndSession;
export const POST = handleEndSession;
