import { withEngine } from "@torii/core/runtime";
import { handleConsoleSignOut } from "@torii/core/console/routes";

export const dynamic = "force-dynamic";
export const POST = withEngine(handleConsoleSignOut);
