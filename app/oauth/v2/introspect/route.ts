import { handleIntrospect } from "@/lib/oauth/introspect";

// The same Web handler that server.ts serves directly (DESIGN.md, "the hot path").
export const dynamic = "force-dynamic";
export const POST = handleIntrospect;
export const GET = handleIntrospect;
