import { getTranslations } from "next-intl/server";
import { CONSOLE_CLIENT_ID, CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { DataTable, EmptyState, FormatDate, PageHeader, SearchForm } from "../../_components/ui";

export const dynamic = "force-dynamic";

export default async function ApplicationsPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const admin = await requireAdmin(`${CONSOLE_PATH}/applications`);
  const sp = await searchParams;
  const t = await getTranslations("console.applications");
  const q = (sp.q ?? "").trim().toLowerCase();
  const all = ((await read(admin.user, "listClients"))?.clients ?? []).filter((c) => c.clientId !== CONSOLE_CLIENT_ID);
  const list = q ? all.filter((c) => c.name.toLowerCase().includes(q) || c.clientId.toLowerCase().includes(q)) : all;
  const newButton = (
    <a className="btn btn-primary btn-auto" href={`${CONSOLE_PATH}/applications/new`}>
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
      {all.length === 0 ? (
        <EmptyState title={t("emptyTitle")} text={t("emptyText")} action={newButton} />
      ) : (
        <div className="panel">
          <div className="panel-toolbar">
            <SearchForm action={`${CONSOLE_PATH}/applications`} value={sp.q} label={t("search")} />
            <span className="muted">{t("count", { count: list.length })}</span>
          </div>
          {list.length === 0 ? (
            <p className="panel-empty">{t("noMatch")}</p>
          ) : (
            <DataTable columns={[t("name"), t("clientId"), t("authMethod"), t("grantTypes"), t("created")]}>
              {list.map((c) => (
                <tr key={c.clientId}>
                  <td>
                    <a className="row-link" href={`${CONSOLE_PATH}/applications/${encodeURIComponent(c.clientId)}`}>
                      {c.name}
                    </a>
                  </td>
                  <td>
                    <code className="id">{c.clientId}</code>
                  </td>
                  <td>{t(`auth.${c.authMethod}` as never)}</td>
                  <td className="muted small">{c.grantTypes.map((g) => g.replace("urn:ietf:params:oauth:grant-type:", "")).join(", ")}</td>
                  <td className="nowrap muted small">
                    <FormatDate iso={c.createdAt} />
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </div>
      )}
    </>
  );
}
