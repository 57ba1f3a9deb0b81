import { handleSubmitAccount } from "@/lib/login/handlers";

export const dynamic = "force-dynamic";
export const POST = handleSubmitAccount;
