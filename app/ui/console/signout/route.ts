import { handleConsoleSignOut } from "@/lib/console/routes";

export const dynamic = "force-dynamic";
export const POST = handleConsoleSignOut;
