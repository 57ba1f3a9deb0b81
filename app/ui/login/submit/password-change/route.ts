import { withEngine } from "@torii/core/runtime";
import { handleSubmitChangePassword } from "@torii/core/login/handlers";

export const dynamic = "force-dynamic";
export const POST = withEngine(handleSubmitChangePassword);
