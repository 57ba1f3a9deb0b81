import { withEngine } from "@torii/core/runtime";
import { handleChangePasswordUrl } from "@torii/core/account/change-password-url";

// The same Web handler that server.ts serves directly (lib/server/routes.ts, BROWSER_ROUTES).
export const dynamic = "force-dynamic";
export const GET = withEngine(handleChangePasswordUrl);
export const HEAD = withEngine(handleChangePasswordUrl);
