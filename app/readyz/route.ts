import { handleReadyz } from "@/lib/http/health";

export const dynamic = "force-dynamic";
export const GET = handleReadyz;
