import { handleHealthz } from "@torii/core/http/health";

export const dynamic = "force-dynamic";
export const GET = handleHealthz;
