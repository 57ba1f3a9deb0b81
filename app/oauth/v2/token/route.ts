import { handleToken } from "@/lib/oauth/token-endpoint";

// The same Web handler that server.ts serves directly (DESIGN.md, "the hot path").
export const dynamic = "force-dynamic";
export const POST = handleToken;
export const GET = handleToken;
