import { withEngine } from "@torii/core/runtime";
import { handleAuthorize } from "@torii/core/oauth/authorize";

export const dynamic = "force-dynamic";
export const GET = withEngine(handleAuthorize);
export const POST = withEngine(handleAuthorize);
