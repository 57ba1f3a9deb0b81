import { sha256 } from "@/lib/crypto";
import type { Settings } from "@/lib/store/settings";

/** Where the instance logo is served (lib/management/logo-endpoint.ts). */
export const LOGO_PATH = "/ui/branding/logo";

// Settings are cached for a few seconds with the same Buffer, so the hash is computed once per logo.
const TAGS = new WeakMap<Buffer, string>();

/** The logo's entity tag, also used to version its URL so that a new logo is fetched at once. */
export function logoTag(logo: Buffer): string {
  let tag = TAGS.get(logo);
  if (!tag) TAGS.set(logo, (tag = sha256(logo.toString("base64")).slice(0, 22)));
  return tag;
}

/**
 * The logo's link for pages: versioned, because the endpoint lets browsers keep a logo for a few
 * minutes and a changed logo must show at once. Null without a logo.
 */
export function logoSrc(settings: Pick<Settings, "logo">): string | null {
  return settings.logo ? `${LOGO_PATH}?v=${logoTag(settings.logo)}` : null;
}
