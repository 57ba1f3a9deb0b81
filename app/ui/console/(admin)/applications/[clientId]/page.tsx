import { getTranslations } from "next-intl/server";
import { notFound } from "next/navigation";
import { deleteApplication, regenerateSecret } from "@/app/_server/console-actions";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { apiGet, requireAdmin } from "@/app/_server/console-next";
import { ApplicationForm, type ClientData } from "../../../_components/application-form";
import { ConsoleForm, Hidden } from "../../../_components/form";
import { Badge, FormatDate, PageHeader, Section } from "../../../_components/ui";
import { CopyButton } from "../../../_components/form";

export const dynamic = "force-dynamic";

export default async function ApplicationPage({ params }: { params: Promise<{ clientId: string }> }) {
  const { clientId } = await params;
  const admin = await requireAdmin(`${CONSOLE_PATH}/applications/${encodeURIComponent(clientId)}`);
  const t = await getTranslations("console.applications");
  const client = await apiGet<ClientData>(admin.user, `/clients/${encodeURIComponent(clientId)}`);
  if (!client) notFound();
  const settings = await apiGet<{ lifetimes: { accessToken: number; idToken: number; refreshToken: number } }>(admin.user, "/settings");
  const secretMethod = client.authMethod === "client_secret_basic" || client.authMethod === "client_secret_post";
  return (
    <>
      <PageHeader
        title={client.name}
        back={{ href: `${CONSOLE_PATH}/applications`, label: t("title") }}
        lead={
          <span className="id-line">
            {t("clientId")}: <code className="id">{client.clientId}</code> <CopyButton value={client.clientId} />
            <Badge>{t(`auth.${client.authMethod}` as never)}</Badge>
            <span className="muted small">
              {t("created")} <FormatDate iso={client.createdAt} />
            </span>
          </span>
        }
      />
      <Section title={t("settingsTitle")} id="settings">
        <ApplicationForm csrf={admin.csrf} client={client} defaults={settings!.lifetimes} />
      </Section>
      {secretMethod ? (
        <Section title={t("secretTitle")} description={t("secretText")} id="secret">
          <ConsoleForm action={regenerateSecret} csrf={admin.csrf} submitLabel={t("regenerate")} inline>
            <Hidden name="clientId" value={client.clientId} />
          </ConsoleForm>
        </Section>
      ) : null}
      <Section title={t("dangerTitle")} description={t("deleteText")} id="danger">
        <details className="confirm">
          <summary className="btn btn-danger-outline">{t("delete")}</summary>
          <div className="confirm-body">
            <p>{t("deleteConfirm", { name: client.name })}</p>
            <ConsoleForm action={deleteApplication} csrf={admin.csrf} submitLabel={t("deleteForever")} danger inline>
              <Hidden name="clientId" value={client.clientId} />
            </ConsoleForm>
          </div>
        </details>
      </Section>
    </>
  );
}
