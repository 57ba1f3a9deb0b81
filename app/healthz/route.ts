import { handleHealthz } from "@/lib/http/health";

export const dynamic = "force-dynamic";
export const GET = handleHealthz;
