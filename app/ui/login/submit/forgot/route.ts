import { withEngine } from "@torii/core/runtime";
import { handleSubmitForgot } from "@torii/core/login/handlers";

export const dynamic = "force-dynamic";
export const POST = withEngine(handleSubmitForgot);
