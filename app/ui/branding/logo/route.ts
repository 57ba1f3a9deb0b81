import { withEngine } from "@torii/core/runtime";
import { handleBrandingLogo } from "@torii/core/management/logo-endpoint";

export const dynamic = "force-dynamic";
export const GET = withEngine(handleBrandingLogo);
export const HEAD = withEngine(handleBrandingLogo);
