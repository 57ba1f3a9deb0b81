import { withEngine } from "@torii/core/runtime";
import { handleAccountCallback } from "@torii/core/account/handlers";

export const dynamic = "force-dynamic";
export const GET = withEngine(handleAccountCallback);
