import { handleRevoke } from "@/lib/oauth/revoke";

// The same Web handler that server.ts serves directly (DESIGN.md, "the hot path").
export const dynamic = "force-dynamic";
export const POST = handleRevoke;
export const GET = handleRevoke;
