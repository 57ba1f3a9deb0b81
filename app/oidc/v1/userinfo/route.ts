import { handleUserinfo } from "@/lib/oauth/userinfo";

// The same Web handler that server.ts serves directly (DESIGN.md, "the hot path").
export const dynamic = "force-dynamic";
export const GET = handleUserinfo;
export const POST = handleUserinfo;
export const OPTIONS = handleUserinfo;
