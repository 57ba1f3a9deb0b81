import { withEngine } from "@torii/core/runtime";
import { handleLogoutConfirm } from "@torii/core/oauth/end-session-confirm";

export const dynamic = "force-dynamic";
export const POST = withEngine(handleLogoutConfirm);
