import { getTranslations } from "next-intl/server";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { RoleBadges } from "../../_components/user-forms";
import { Badge, DataTable, EmptyState, PageHeader, SearchForm } from "../../_components/ui";

export const dynamic = "force-dynamic";
const PAGE = 25;

export default async function UsersPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const admin = await requireAdmin(`${CONSOLE_PATH}/users`);
  const sp = await searchParams;
  const t = await getTranslations("console.users");
  const tc = await getTranslations("console.common");
  const offset = Math.max(0, Number.parseInt(sp.offset ?? "0", 10) || 0);
  const type = sp.type === "human" || sp.type === "machine" ? sp.type : undefined;
  const query = new URLSearchParams({ limit: String(PAGE), offset: String(offset) });
  if (sp.q) query.set("search", sp.q);
  if (type) query.set("type", type);
  const data = await read(admin.user, "listUsers", { query: Object.fromEntries(query) });
  const users = data?.users ?? [];
  const total = data?.total ?? 0;
  const link = (o: number) => {
    const p = new URLSearchParams();
    if (sp.q) p.set("q", sp.q);
    if (type) p.set("type", type);
    if (o) p.set("offset", String(o));
    return `${CONSOLE_PATH}/users${p.size ? `?${p}` : ""}`;
  };
  const actions = (
    <>
      <a className="btn btn-secondary" href={`${CONSOLE_PATH}/users/new?type=machine`}>
        {t("newMachine")}
      </a>
      <a className="btn btn-primary btn-auto" href={`${CONSOLE_PATH}/users/new`}>
        {t("new")}
      </a>
    </>
  );
  return (
    <>
      <PageHeader title={t("title")} lead={t("lead")} actions={actions} />
      {sp.deleted ? (
        <div className="alert alert-ok" role="status">
          {t("deleted")}
        </div>
      ) : null}
      <div className="panel">
        <div className="panel-toolbar">
          <SearchForm action={`${CONSOLE_PATH}/users`} value={sp.q} label={t("search")} hidden={type ? { type } : {}} />
          <nav className="segmented" aria-label={t("filterType")}>
            {[undefined, "human", "machine"].map((v) => (
              <a key={v ?? "all"} href={(() => { const p = new URLSearchParams(); if (sp.q) p.set("q", sp.q); if (v) p.set("type", v); return `${CONSOLE_PATH}/users${p.size ? `?${p}` : ""}`; })()} aria-current={type === v ? "page" : undefined}>
                {v ? t(`type.${v}`) : t("type.all")}
              </a>
            ))}
          </nav>
        </div>
        {users.length === 0 ? (
          <EmptyState title={t("emptyTitle")} text={sp.q ? t("noMatch") : t("emptyText")} />
        ) : (
          <DataTable columns={[t("username"), t("nameEmail"), t("typeLabel"), t("roles"), t("status")]}>
            {users.map((u) => (
              <tr key={u.id}>
                <td>
                  <a className="row-link" href={`${CONSOLE_PATH}/users/${encodeURIComponent(u.id)}`}>
                    {u.username}
                  </a>
                </td>
                <td className="muted">
                  {u.type === "machine" ? u.name : [[u.givenName, u.familyName].filter(Boolean).join(" "), u.email].filter(Boolean).join(" · ") || "—"}
                </td>
                <td>{t(`type.${u.type}`)}</td>
                <td>
                  {u.roles.length ? <RoleBadges roles={u.roles} /> : <span className="muted">—</span>}
                </td>
                <td>{u.locked ? <Badge tone="danger">{t("locked")}</Badge> : <Badge tone="ok">{t("active")}</Badge>}</td>
              </tr>
            ))}
          </DataTable>
        )}
        <div className="pager">
          <span className="muted small">{tc("range", { from: total ? offset + 1 : 0, to: offset + users.length, total })}</span>
          <span className="pager-links">
            {offset > 0 ? <a className="btn btn-secondary" href={link(Math.max(0, offset - PAGE))}>{tc("previous")}</a> : null}
            {offset + PAGE < total ? <a className="btn btn-secondary" href={link(offset + PAGE)}>{tc("next")}</a> : null}
          </span>
        </div>
      </div>
    </>
  );
}
