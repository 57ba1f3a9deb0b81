import { withEngine } from "@torii/core/runtime";
import { handleUserinfo } from "@torii/core/oauth/userinfo";

// The same Web handler that server.ts serves directly (docs/architecture.md, "A token request").
export const dynamic = "force-dynamic";
export const GET = withEngine(handleUserinfo);
export const POST = withEngine(handleUserinfo);
export const OPTIONS = withEngine(handleUserinfo);
