import { handleFavicon } from "@torii/core/management/logo-endpoint";
import { withEngine } from "@torii/core/runtime";

export const dynamic = "force-dynamic";
export const GET = withEngine(handleFavicon);
export const HEAD = withEngine(handleFavicon);
