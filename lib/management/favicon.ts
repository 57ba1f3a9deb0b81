import type { Branding } from "@/db/schema";
import { contrastColor } from "@/lib/login/branding";

const HEX = /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/**
 * The icon browsers show for Torii when the instance has no logo: a torii gate in the brand's
 * primary colour, drawn in its contrast colour. SVG (browsers take an icon by its content type,
 * whatever the path says), so it needs no binary asset and follows the branding.
 */
export function defaultIconSvg(branding: Pick<Branding, "primaryColor">): string {
  const fill = HEX.test(branding.primaryColor) ? branding.primaryColor : "#c2410c";
  const ink = contrastColor(fill);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">` +
    `<rect width="32" height="32" rx="7" fill="${fill}"/>` +
    `<path fill="${ink}" d="M4 7h24v3.5H4zM7 13h18v2.5H7zM9 10h3v16H9zM20 10h3v16h-3z"/>` +
    `</svg>`
  );
}
