import type { Branding } from "@/db/schema";

const HEX = /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/** Black or white text, whichever reads better on the brand color (WCAG relative luminance). */
export function contrastColor(hex: string): string {
  if (!HEX.test(hex)) return "#ffffff";
  let h = hex.slice(1);
  if (h.length === 3) h = h.replace(/./g, "$&$&");
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = parseInt(h.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  const l = 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  return l > 0.4 ? "#1c1917" : "#ffffff";
}

/** CSS custom properties for the instance branding; invalid colors fall back to the defaults. */
export function brandingVariables(b: Branding): Record<string, string> {
  const vars: Record<string, string> = {};
  if (HEX.test(b.primaryColor)) {
    vars["--brand"] = b.primaryColor;
    vars["--brand-contrast"] = contrastColor(b.primaryColor);
  }
  if (HEX.test(b.backgroundColor)) vars["--bg-light"] = b.backgroundColor;
  return vars;
}
