import { handleLogoutConfirm } from "@/lib/oauth/end-session-confirm";

export const dynamic = "force-dynamic";
export const POST = handleLogoutConfirm;
