import { getTranslations } from "next-intl/server";
import type { Settings } from "@torii/core/store/settings";
import { BrandMark } from "./brand-mark";

/** The frame of every login page: brand, one card with the page's single <h1>, a quiet footer. */
export async function AuthShell({
  settings,
  title,
  subtitle,
  children,
}: {
  settings: Pick<Settings, "branding" | "logo">;
  title: string;
  subtitle?: React.ReactNode;
  children: React.ReactNode;
}) {
  const t = await getTranslations("login");
  const product = settings.branding.productName || "Torii";
  return (
    <main className="auth-page">
      <div className="auth-card card">
        <div className="brand">
          <BrandMark settings={settings} height={32} />
          <span>{product}</span>
        </div>
        <h1>{title}</h1>
        {subtitle ? <p className="lead">{subtitle}</p> : null}
        {children}
      </div>
      <p className="auth-footer">{t("footer", { product: "Torii" })}</p>
    </main>
  );
}

export function FlowFields({ id, csrf }: { id: string; csrf: string }) {
  return (
    <>
      <input type="hidden" name="authRequest" value={id} />
      <input type="hidden" name="csrf" value={csrf} />
    </>
  );
}

export function Alert({ children, id }: { children: React.ReactNode; id?: string }) {
  return (
    <div className="alert alert-error" role="alert" id={id}>
      {children}
    </div>
  );
}
