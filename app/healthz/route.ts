import { handleHealthz } from "@torii/core/server/health";

export const dynamic = "force-dynamic";
export const GET = handleHealthz;
