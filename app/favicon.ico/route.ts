import { handleFavicon } from "@/lib/management/logo-endpoint";

export const dynamic = "force-dynamic";
export const GET = handleFavicon;
export const HEAD = handleFavicon;
