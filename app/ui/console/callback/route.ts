import { withEngine } from "@torii/core/runtime";
import { handleConsoleCallback } from "@torii/core/console/routes";

export const dynamic = "force-dynamic";
export const GET = withEngine(handleConsoleCallback);
