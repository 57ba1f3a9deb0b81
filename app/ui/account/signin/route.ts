import { withEngine } from "@torii/core/runtime";
import { handleAccountSignIn } from "@torii/core/account/handlers";

export const dynamic = "force-dynamic";
export const GET = withEngine(handleAccountSignIn);
