import { getTranslations } from "next-intl/server";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { call, read, requireAdmin } from "@/app/_server/console-next";
import { AuditSentence, idsToName, type AuditNames } from "../../_components/audit-sentence";
import { DataTable, EmptyState, FormatDate, PageHeader } from "../../_components/ui";

export const dynamic = "force-dynamic";
const PAGE = 50;


const FILTERS = ["action", "actorId", "targetId", "clientId", "from", "to"] as const;

/** A datetime-local value (no zone) read as UTC, the zone the table shows. */
const asIso = (v: string) => (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(v) ? `${v.length === 16 ? v + ":00" : v}Z` : v);

export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const admin = await requireAdmin(`${CONSOLE_PATH}/audit`);
  const sp = await searchParams;
  const t = await getTranslations("console.audit");
  const tc = await getTranslations("console.common");
  const offset = Math.max(0, Number.parseInt(sp.offset ?? "0", 10) || 0);
  const query = new URLSearchParams({ limit: String(PAGE), offset: String(offset) });
  for (const f of FILTERS) {
    const v = (sp[f] ?? "").trim();
    if (v) query.set(f, f === "from" || f === "to" ? asIso(v) : v);
  }
  // The user filter takes a username as well as an id: administrators know the names.
  const actor = (sp.actorId ?? "").trim();
  if (actor) {
    const found = await read(admin.user, "listUsers", { query: { search: actor, limit: 20 } });
    const exact = found?.users.find((u) => u.username.toLowerCase() === actor.toLowerCase());
    if (exact) query.set("actorId", exact.id);
  }
  const r = await call(admin.user, "listAuditEvents", { query: Object.fromEntries(query) });
  const events = r.ok ? r.data.events : [];
  // Names for the users and applications on this page (a page holds few distinct ones).
  const ids = idsToName(events).users;
  const [named, clients] = await Promise.all([
    ids.length ? read(admin.user, "listUsers", { query: { ids: ids.join(","), limit: 50 } }) : null,
    events.some((e) => e.clientId || e.actorType === "client" || e.targetType === "client") ? read(admin.user, "listClients") : null,
  ]);
  const names: AuditNames = {
    users: new Map((named?.users ?? []).map((u) => [u.id, u.username])),
    clients: new Map((clients?.clients ?? []).map((c) => [c.clientId, c.name])),
  };
  const total = r.ok ? r.data.total : 0;
  const link = (o: number) => {
    const p = new URLSearchParams();
    for (const f of FILTERS) if (sp[f]) p.set(f, sp[f]);
    if (o) p.set("offset", String(o));
    return `${CONSOLE_PATH}/audit${p.size ? `?${p}` : ""}`;
  };
  return (
    <>
      <PageHeader title={t("title")} lead={t("lead")} />
      <form method="get" action={`${CONSOLE_PATH}/audit`} className="panel panel-pad filter-form" role="search" aria-label={t("filters")}>
        <div className="filter-grid">
          {FILTERS.map((f) => (
            <div className="field" key={f}>
              <label htmlFor={`f-${f}`}>{t(`filter.${f}`)}</label>
              <input id={`f-${f}`} name={f} type={f === "from" || f === "to" ? "datetime-local" : "text"} defaultValue={sp[f] ?? ""} placeholder={f === "action" ? "client.created" : undefined} />
            </div>
          ))}
        </div>
        <div className="form-actions">
          <button type="submit" className="btn btn-primary btn-auto">
            {t("apply")}
          </button>
          <a className="btn btn-secondary" href={`${CONSOLE_PATH}/audit`}>
            {t("clear")}
          </a>
        </div>
      </form>
      {!r.ok ? (
        <div className="alert alert-error" role="alert">
          {r.fields.map((f) => `${f.path}: ${f.message}`).join(" ") || r.message}
        </div>
      ) : null}
      <div className="panel">
        {events.length === 0 ? (
          <EmptyState title={t("emptyTitle")} text={t("emptyText")} />
        ) : (
          <DataTable columns={[t("time"), t("event"), t("ip")]}>
            {events.map((e) => (
              <tr key={e.id}>
                <td className="nowrap small">
                  <FormatDate iso={e.occurredAt} />
                </td>
                <td>
                  <AuditSentence event={e} names={names} />
                  <div className="small muted">
                    <a className="audit-action" href={`${link(0).split("?")[0] ?? ""}?action=${encodeURIComponent(e.action)}`} title={t("filter.action")}>
                      <code>{e.action}</code>
                    </a>
                    {e.details ? (
                      <span className="details">
                        {" · "}
                        {Object.entries(e.details)
                          .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
                          .join(" · ")
                          .slice(0, 200)}
                      </span>
                    ) : null}
                  </div>
                </td>
                <td className="small muted">{e.ip ?? "—"}</td>
              </tr>
            ))}
          </DataTable>
        )}
        <div className="pager">
          <span className="muted small">{tc("range", { from: total ? offset + 1 : 0, to: offset + events.length, total })}</span>
          <span className="pager-links">
            {offset > 0 ? <a className="btn btn-secondary" href={link(Math.max(0, offset - PAGE))}>{tc("newer")}</a> : null}
            {offset + PAGE < total ? <a className="btn btn-secondary" href={link(offset + PAGE)}>{tc("older")}</a> : null}
          </span>
        </div>
      </div>
    </>
  );
}
