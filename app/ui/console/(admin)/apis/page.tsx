import { getTranslations } from "next-intl/server";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { DataTable, EmptyState, FormatDate, PageHeader } from "../../_components/ui";

export const dynamic = "force-dynamic";

/** The API resources: what access tokens can be for (RFC 8707), with their scopes and roles. */
export default async function ApisPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const admin = await requireAdmin(`${CONSOLE_PATH}/apis`);
  const sp = await searchParams;
  const t = await getTranslations("console.apis");
  const list = (await read(admin.user, "listApis"))?.apis ?? [];
  const newButton = (
    <a className="btn btn-primary btn-auto" href={`${CONSOLE_PATH}/apis/new`}>
      {t("new")}
    </a>
  );
  return (
    <>
      <PageHeader title={t("title")} lead={t("lead")} actions={newButton} />
      {sp.deleted ? (
        <div className="alert alert-ok" role="status">
          {t("deleted")}
        </div>
      ) : null}
      {list.length === 0 ? (
        <EmptyState title={t("emptyTitle")} text={t("emptyText")} action={newButton} />
      ) : (
        <div className="panel">
          <DataTable columns={[t("name"), t("identifier"), t("scopes"), t("roles"), t("accessTokenType"), t("created")]}>
            {list.map((a) => (
              <tr key={a.apiId}>
                <td>
                  <a className="row-link" href={`${CONSOLE_PATH}/apis/${encodeURIComponent(a.apiId)}`}>
                    {a.name}
                  </a>
                </td>
                <td>
                  <code className="id">{a.identifier}</code>
                </td>
                <td className="muted small">{a.scopes.map((s) => s.name).join(", ")}</td>
                <td className="muted small">{a.roles.map((r) => r.key).join(", ")}</td>
                <td>{t(a.accessTokenType === "jwt" ? "tokenJwt" : "tokenOpaque")}</td>
                <td className="nowrap muted small">
                  <FormatDate iso={a.createdAt} />
                </td>
              </tr>
            ))}
          </DataTable>
        </div>
      )}
    </>
  );
}
