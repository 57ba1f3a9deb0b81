import { getTranslations } from "next-intl/server";
import { notFound } from "next/navigation";
import { deleteApiResource, rotateApiResourceSecret } from "@/app/_server/console-actions";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { ApiForm } from "../../../_components/api-form";
import { ConsoleForm, CopyButton, Hidden } from "../../../_components/form";
import { DangerZone } from "../../../_components/danger-zone";
import { Badge, FormatDate, PageHeader, Section } from "../../../_components/ui";

export const dynamic = "force-dynamic";

export default async function ApiPage({ params }: { params: Promise<{ apiId: string }> }) {
  const { apiId } = await params;
  const admin = await requireAdmin(`${CONSOLE_PATH}/apis/${encodeURIComponent(apiId)}`);
  const t = await getTranslations("console.apis");
  const api = await read(admin.user, "getApi", { params: { apiId } });
  if (!api) notFound();
  const settings = await read(admin.user, "getSettings");
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
