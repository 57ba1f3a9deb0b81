import { handleAuthorizeCallback } from "@/lib/oauth/authorize";

export const dynamic = "force-dynamic";
export const GET = handleAuthorizeCallback;
