import { withEngine } from "@torii/core/runtime";
import { handleSubmitPassword } from "@torii/core/login/handlers";

export const dynamic = "force-dynamic";
export const POST = withEngine(handleSubmitPassword);
