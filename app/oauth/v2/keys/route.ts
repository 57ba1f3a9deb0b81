import { handleKeys } from "@/lib/oauth/keys-endpoint";

// The same Web handler that server.ts serves directly (DESIGN.md, "the hot path").
export const dynamic = "force-dynamic";
export const GET = handleKeys;
export const HEAD = handleKeys;
