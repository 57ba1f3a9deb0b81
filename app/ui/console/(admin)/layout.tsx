import { NextIntlClientProvider } from "next-intl";
import { getMessages, getTranslations } from "next-intl/server";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { requireAdmin } from "@/app/_server/console-next";
import { torii } from "@torii/core/runtime";
import { getSettings } from "@torii/core/store/settings";
import { BrandMark } from "../../components/brand-mark";
import { consoleClientMessages } from "../_components/client-messages";
import { NavLink } from "../_components/nav-link";
import "../console.css";

const SECTIONS = [
  ["overview", ""],
  ["applications", "/applications"],
  ["apis", "/apis"],
  ["users", "/users"],
  ["features", "/features"],
  ["keys", "/keys"],
  ["branding", "/branding"],
  ["texts", "/texts"],
  ["settings", "/settings"],
  ["audit", "/audit"],
  ["outbox", "/outbox"],
] as const;

export async function generateMetadata() {
  const t = await getTranslations("console.nav");
  const settings = await getSettings(await torii());
  return { title: `${t("console")} · ${settings.branding.productName || "Torii"}` };
}

/** The console frame: sidebar navigation (a top bar on phones), the signed-in administrator, sign-out. */
export default async function ConsoleLayout({ children }: { children: React.ReactNode }) {
  const admin = await requireAdmin();
  const t = await getTranslations("console");
  const settings = await getSettings(await torii());
  const product = settings.branding.productName || "Torii";
  return (
    <div className="console">
      <a href="#main" className="skip-link">
        {t("nav.skip")}
      </a>
      <aside className="console-side">
        <a className="console-brand" href={CONSOLE_PATH}>
          <BrandMark settings={settings} height={28} />
          <span className="console-brand-text">
            <span>{product}</span>
            <span className="console-brand-sub">{t("nav.console")}</span>
          </span>
        </a>
        <nav aria-label={t("nav.label")} className="console-nav">
          {SECTIONS.map(([key, path]) => (
            <NavLink key={key} href={CONSOLE_PATH + path} exact={path === ""}>
              {t(`nav.${key}`)}
            </NavLink>
          ))}
        </nav>
        <div className="console-user">
          <span className="avatar" aria-hidden="true">
            {admin.user.username.slice(0, 1).toUpperCase()}
          </span>
          <span className="console-user-name" title={admin.user.username}>
            {admin.user.username}
          </span>
          <form method="post" action={`${CONSOLE_PATH}/signout`}>
            <input type="hidden" name="csrf" value={admin.csrf} />
            <button type="submit" className="btn btn-ghost">
              {t("nav.signOut")}
            </button>
          </form>
        </div>
      </aside>
      <main id="main" className="console-main" tabIndex={-1}>
        <NextIntlClientProvider messages={consoleClientMessages(await getMessages())}>{children}</NextIntlClientProvider>
      </main>
    </div>
  );
}
