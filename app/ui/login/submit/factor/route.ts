import { withEngine } from "@torii/core/runtime";
import { handleSubmitSecondFactor } from "@torii/core/login/factor-handlers";

export const dynamic = "force-dynamic";
export const POST = withEngine(handleSubmitSecondFactor);
