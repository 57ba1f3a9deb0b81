import { handleBrandingLogo } from "@/lib/management/logo-endpoint";

export const dynamic = "force-dynamic";
export const GET = handleBrandingLogo;
export const HEAD = handleBrandingLogo;
