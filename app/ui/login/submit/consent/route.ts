import { withEngine } from "@torii/core/runtime";
import { handleSubmitConsent } from "@torii/core/login/handlers";

export const dynamic = "force-dynamic";
export const POST = withEngine(handleSubmitConsent);
