import { getTranslations } from "next-intl/server";
import { notFound } from "next/navigation";
import { deleteApiResource, rotateApiResourceSecret } from "@/app/_server/console-actions";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { ApiForm } from "../../../_components/api-form";
import { ConsoleForm, CopyButton, Hidden } from "../../../_components/form";
import { DangerZone } from "../../../_components/danger-zone";
import { Badge, FormatDate, PageHeader, Section } from "../../../_components/ui";
import { RoleHolders, type HolderPage } from "../../../_components/role-holders";

export const dynamic = "force-dynamic";
const HOLDERS_PAGE = 25;

export default async function ApiPage({ params, searchParams }: { params: Promise<{ apiId: string }>; searchParams: Promise<Record<string, string | undefined>> }) {
  const { apiId } = await params;
  const sp = await searchParams;
  const admin = await requireAdmin(`${CONSOLE_PATH}/apis/${encodeURIComponent(apiId)}`);
  const t = await getTranslations("console.apis");
  const api = await read(admin.user, "getApi", { params: { apiId } });
  if (!api) notFound();
  const settings = await read(admin.user, "getSettings");
  const pages: Record<string, HolderPage> = {};
  for (const role of api.roles) {
    const offset = sp.role === role.key ? Math.max(0, Number.parseInt(sp.offset ?? "0", 10) || 0) : 0;
    const page = await read(admin.user, "getRoleHolders", { params: { apiId, roleKey: role.key }, query: { limit: String(HOLDERS_PAGE), offset: String(offset) } });
    if (page) pages[role.key] = page;
  }
  return (
    <>
      <PageHeader
        title={api.name}
        back={{ href: `${CONSOLE_PATH}/apis`, label: t("title") }}
        lead={
          <span className="id-line">
            {t("identifier")}: <code className="id">{api.identifier}</code> <CopyButton value={api.identifier} />
            <Badge>{t(api.accessTokenType === "jwt" ? "tokenJwt" : "tokenOpaque")}</Badge>
            <span className="muted small">
              {t("created")} <FormatDate iso={api.createdAt} />
            </span>
          </span>
        }
      />
      <Section title={t("settingsTitle")} id="settings">
        <ApiForm csrf={admin.csrf} api={api} defaultLifetime={settings!.lifetimes.accessToken} />
      </Section>
      {api.roles.length ? (
        <Section title={t("holdersTitle")} description={t("holdersText")} id="holders">
          <RoleHolders csrf={admin.csrf} api={api} pages={pages} pageSize={HOLDERS_PAGE} />
        </Section>
      ) : null}
      <Section title={t("secretTitle")} description={t("secretText", { identifier: api.identifier })} id="secret">
        <p className="muted small">{api.hasSecret ? t("hasSecret") : t("noSecret")}</p>
        <ConsoleForm action={rotateApiResourceSecret} csrf={admin.csrf} submitLabel={api.hasSecret ? t("regenerate") : t("createSecret")} inline>
          <Hidden name="apiId" value={api.apiId} />
        </ConsoleForm>
      </Section>
      <DangerZone
        texts={{ title: t("dangerTitle"), text: t("deleteText"), open: t("delete"), confirm: t("deleteConfirm", { name: api.name }), submit: t("deleteForever") }}
        action={deleteApiResource}
        csrf={admin.csrf}
        field={{ name: "apiId", value: api.apiId }}
      />
    </>
  );
}
