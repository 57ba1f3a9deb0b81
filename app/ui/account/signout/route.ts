import { withEngine } from "@torii/core/runtime";
import { handleAccountSignOut } from "@torii/core/account/handlers";

export const dynamic = "force-dynamic";
export const POST = withEngine(handleAccountSignOut);
