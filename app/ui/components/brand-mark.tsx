import { logoSrc } from "@torii/core/logo";
import type { Settings } from "@torii/core/store/settings";

/** The instance logo, or the product name's initial on the brand color when there is none. */
export function BrandMark({ settings, height }: { settings: Pick<Settings, "branding" | "logo">; height: number }) {
  const src = logoSrc(settings);
  const product = settings.branding.productName || "Torii";
  return src ? (
    // eslint-disable-next-line @next/next/no-img-element
    <img className="brand-logo" src={src} alt="" height={height} />
  ) : (
    <span className="brand-mark" aria-hidden="true">
      {product.slice(0, 1).toUpperCase()}
    </span>
  );
}
