import { withEngine } from "@torii/core/runtime";
import { handleReadyz } from "@torii/core/server/health";

export const dynamic = "force-dynamic";
export const GET = withEngine(handleReadyz);
