import { withEngine } from "@torii/core/runtime";
import { handleSubmitPasskeySignIn } from "@torii/core/login/passkey-handlers";

export const dynamic = "force-dynamic";
export const POST = withEngine(handleSubmitPasskeySignIn);
