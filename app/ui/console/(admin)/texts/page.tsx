import { getTranslations } from "next-intl/server";
import { saveTexts } from "@/app/_server/console-actions";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import type { ApiResponse } from "../../_components/api-types";
import { isLocale, LOCALES } from "@torii/core/i18n/locales";
import { ConsoleForm, Field, Hidden } from "../../_components/form";
import { Badge, PageHeader } from "../../_components/ui";

export const dynamic = "force-dynamic";

type Text = ApiResponse<"getLoginTexts">["texts"][number];

export default async function TextsPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const sp = await searchParams;
  const locale = sp.locale && isLocale(sp.locale) ? sp.locale : "en";
  const admin = await requireAdmin(`${CONSOLE_PATH}/texts?locale=${locale}`);
  const t = await getTranslations("console.texts");
  const data = (await read(admin.user, "getLoginTexts", { params: { locale } }))!;
  const q = (sp.q ?? "").toLowerCase();
  const texts = q ? data.texts.filter((x) => x.key.toLowerCase().includes(q) || (x.override ?? x.default).toLowerCase().includes(q)) : data.texts;
  const overridden = data.texts.filter((x) => x.override !== null).length;
  // Grouped by page or part of a page (the key without its last part), in catalog order.
  const byGroup = new Map<string, Text[]>();
  for (const x of texts) {
    const g = x.key.slice(0, x.key.lastIndexOf("."));
    byGroup.set(g, [...(byGroup.get(g) ?? []), x]);
  }
  const groups = [...byGroup];
  return (
    <>
      <PageHeader title={t("title")} lead={t("lead")} />
      <div className="panel-toolbar bare">
        <nav className="segmented" aria-label={t("language")}>
          {LOCALES.map((l) => (
            <a key={l} href={`${CONSOLE_PATH}/texts?locale=${l}`} aria-current={l === locale ? "page" : undefined} lang={l}>
              {t(`locale.${l}`)}
            </a>
          ))}
        </nav>
        <form method="get" action={`${CONSOLE_PATH}/texts`} role="search" className="search-form">
          <input type="hidden" name="locale" value={locale} />
          <label htmlFor="q" className="sr-only">
            {t("search")}
          </label>
          <input id="q" name="q" type="search" defaultValue={sp.q} placeholder={t("search")} />
        </form>
        <span className="muted small">{t("overridden", { count: overridden })}</span>
      </div>
      <div className="panel panel-pad">
        <ConsoleForm action={saveTexts} csrf={admin.csrf} submitLabel={t("save")} className="console-form sticky-actions">
          <Hidden name="locale" value={locale} />
          {groups.map(([group, items]) => (
            <section key={group} className="text-group" aria-labelledby={`group-${group}`}>
              <h2 id={`group-${group}`} className="text-group-title">
                {group}
              </h2>
              <div className="text-list">
                {items.map((x) => (
                  <div key={x.key} className={`text-item${x.override !== null ? " is-overridden" : ""}`}>
                    <Hidden name={`shown.${x.key}`} value={x.override ?? x.default} />
                    <Field name={`texts.${x.key}`} label={x.key} defaultValue={x.override ?? x.default} multiline rows={x.default.length > 80 ? 3 : 1} hint={x.override !== null ? t("defaultIs", { text: x.default }) : undefined} />
                    {x.override !== null ? (
                      <div className="text-meta">
                        <Badge tone="brand">{t("custom")}</Badge>
                        <button type="submit" name="reset" value={x.key} className="btn btn-ghost btn-small">
                          {t("reset")}
                        </button>
                      </div>
                    ) : null}
                  </div>
                ))}
              </div>
            </section>
          ))}
        </ConsoleForm>
      </div>
    </>
  );
}
