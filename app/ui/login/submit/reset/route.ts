import { withEngine } from "@torii/core/runtime";
import { handleSubmitReset } from "@torii/core/login/handlers";

export const dynamic = "force-dynamic";
export const POST = withEngine(handleSubmitReset);
