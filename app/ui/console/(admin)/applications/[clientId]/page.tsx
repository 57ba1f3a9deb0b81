import { getTranslations } from "next-intl/server";
import { notFound } from "next/navigation";
import { deleteApplication, regenerateSecret } from "@/app/_server/console-actions";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { ApplicationForm } from "../../../_components/application-form";
import { ApiRolesForm } from "../../../_components/api-roles-form";
import { ConsoleForm, Hidden } from "../../../_components/form";
import { DangerZone } from "../../../_components/danger-zone";
import { Badge, FormatDate, PageHeader, Section } from "../../../_components/ui";
import { CopyButton } from "../../../_components/form";

export const dynamic = "force-dynamic";

export default async function ApplicationPage({ params }: { params: Promise<{ clientId: string }> }) {
  const { clientId } = await params;
  const admin = await requireAdmin(`${CONSOLE_PATH}/applications/${encodeURIComponent(clientId)}`);
  const t = await getTranslations("console.applications");
  const client = await read(admin.user, "getClient", { params: { clientId } });
  if (!client) notFound();
  const [settings, apis, roles] = await Promise.all([
    read(admin.user, "getSettings"),
    read(admin.user, "listApis"),
    read(admin.user, "getClientRoles", { params: { clientId } }),
  ]);
  const apiList = apis?.apis ?? [];
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
        <ApplicationForm csrf={admin.csrf} client={client} defaults={settings!.lifetimes} apis={apiList} />
      </Section>
      {client.grantTypes.includes("client_credentials") && apiList.length ? (
        <Section title={t("rolesTitle")} description={t("rolesText")} id="roles">
          <ApiRolesForm csrf={admin.csrf} holder={{ clientId: client.clientId }} apis={apiList} roles={roles ?? {}} />
        </Section>
      ) : null}
      {secretMethod ? (
        <Section title={t("secretTitle")} description={t("secretText")} id="secret">
          <ConsoleForm action={regenerateSecret} csrf={admin.csrf} submitLabel={t("regenerate")} inline>
            <Hidden name="clientId" value={client.clientId} />
          </ConsoleForm>
        </Section>
      ) : null}
      <DangerZone
        texts={{ title: t("dangerTitle"), text: t("deleteText"), open: t("delete"), confirm: t("deleteConfirm", { name: client.name }), submit: t("deleteForever") }}
        action={deleteApplication}
        csrf={admin.csrf}
        field={{ name: "clientId", value: client.clientId }}
      />
    </>
  );
}
