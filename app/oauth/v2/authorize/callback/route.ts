import { withEngine } from "@torii/core/runtime";
import { handleAuthorizeCallback } from "@torii/core/oauth/authorize";

export const dynamic = "force-dynamic";
export const GET = withEngine(handleAuthorizeCallback);
