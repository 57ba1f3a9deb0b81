import { withEngine } from "@torii/core/runtime";
import { handleKeys } from "@torii/core/oauth/keys-endpoint";

// The same Web handler that server.ts serves directly (docs/architecture.md, "A token request").
export const dynamic = "force-dynamic";
export const GET = withEngine(handleKeys);
export const HEAD = withEngine(handleKeys);
export const OPTIONS = withEngine(handleKeys);
