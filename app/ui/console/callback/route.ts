import { handleConsoleCallback } from "@/lib/console/routes";

export const dynamic = "force-dynamic";
export const GET = handleConsoleCallback;
