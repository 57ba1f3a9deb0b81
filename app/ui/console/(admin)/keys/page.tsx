import { getTranslations } from "next-intl/server";
import { rotateKey } from "@/app/_server/console-actions";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { ConsoleForm } from "../../_components/form";
import { Badge, DataTable, FormatDate, PageHeader, Section } from "../../_components/ui";

export const dynamic = "force-dynamic";


export default async function KeysPage() {
  const admin = await requireAdmin(`${CONSOLE_PATH}/keys`);
  const t = await getTranslations("console.keys");
  const keys = (await read(admin.user, "listSigningKeys"))!.keys.slice().reverse();
  return (
    <>
      <PageHeader title={t("title")} lead={t("lead")} />
      <div className="panel">
        <DataTable columns={[t("kid"), t("alg"), t("created"), t("status"), t("removeAfter")]}>
          {keys.map((k) => (
            <tr key={k.kid} data-kid={k.kid}>
              <td>
                <code className="id">{k.kid}</code>
              </td>
              <td>{k.alg}</td>
              <td className="nowrap small">
                <FormatDate iso={k.createdAt} />
              </td>
              <td>{k.status === "active" ? <Badge tone="ok">{t("active")}</Badge> : <Badge>{t(k.status)}</Badge>}</td>
              <td className="nowrap small">
                <FormatDate iso={k.removeAfter} />
              </td>
            </tr>
          ))}
        </DataTable>
      </div>
      <Section title={t("rotateTitle")} description={t("rotateText")} id="rotate">
        <ConsoleForm action={rotateKey} csrf={admin.csrf} submitLabel={t("rotate")} inline />
      </Section>
    </>
  );
}
