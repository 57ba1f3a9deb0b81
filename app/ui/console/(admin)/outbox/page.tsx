import { getTranslations } from "next-intl/server";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { Badge, DataTable, EmptyState, FormatDate, PageHeader, SearchForm } from "../../_components/ui";

export const dynamic = "force-dynamic";

const TONE = { sent: "ok", failed: "danger", queued: "brand", held: "warn" } as const;

/** Every mail Torii wrote, with its state: the way to read them when no mail server is set. */
export default async function OutboxPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const admin = await requireAdmin(`${CONSOLE_PATH}/outbox`);
  const t = await getTranslations("console.outbox");
  // The mails to one address, when the administrator looks for what a user was sent.
  const q = (await searchParams).q?.trim() || undefined;
  const mails = (await read(admin.user, "listOutbox", { query: { limit: 100, ...(q ? { to: q } : {}) } }))?.mails ?? [];
  return (
    <>
      <PageHeader title={t("title")} lead={t("lead")} />
      <div className="panel">
        <div className="panel-toolbar">
          <SearchForm action={`${CONSOLE_PATH}/outbox`} value={q} label={t("search")} />
        </div>
        {mails.length === 0 ? (
          <EmptyState title={t("emptyTitle")} text={q ? t("noMatch") : t("emptyText")} />
        ) : (
          <DataTable columns={[t("created"), t("to"), t("subject"), t("state"), t("attempts")]}>
            {mails.map((m) => (
              <tr key={m.mailId}>
                <td className="nowrap muted small">
                  <FormatDate iso={m.createdAt} />
                </td>
                <td>{m.to}</td>
                <td>
                  <a className="row-link" href={`${CONSOLE_PATH}/outbox/${encodeURIComponent(m.mailId)}`}>
                    {m.subject}
                  </a>
                </td>
                <td>
                  <Badge tone={TONE[m.state]}>{t(`states.${m.state}`)}</Badge>
                  {m.lastError ? <span className="hint block">{m.lastError}</span> : null}
                </td>
                <td className="muted small">{m.attempts}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </div>
    </>
  );
}
