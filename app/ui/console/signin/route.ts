import { withEngine } from "@torii/core/runtime";
import { handleConsoleSignIn } from "@torii/core/console/routes";

export const dynamic = "force-dynamic";
export const GET = withEngine(handleConsoleSignIn);
