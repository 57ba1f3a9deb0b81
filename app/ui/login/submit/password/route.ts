import { handleSubmitPassword } from "@/lib/login/handlers";

export const dynamic = "force-dynamic";
export const POST = handleSubmitPassword;
