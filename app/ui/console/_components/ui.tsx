import { getTranslations } from "next-intl/server";

/** The page's single <h1>, its lead text and its main actions. */
export function PageHeader({ title, lead, actions, back }: { title: string; lead?: React.ReactNode; actions?: React.ReactNode; back?: { href: string; label: string } }) {
  return (
    <header className="page-header">
      <div className="page-title">
        {back ? (
          <a className="back-link" href={back.href}>
            ← {back.label}
          </a>
        ) : null}
        <h1>{title}</h1>
        {lead ? <p className="lead">{lead}</p> : null}
      </div>
      {actions ? <div className="page-actions">{actions}</div> : null}
    </header>
  );
}

export function Section({ title, description, children, id: name }: { title: string; description?: string; children: React.ReactNode; id?: string }) {
  // Prefixed: a section may hold a field of the same name (the password section and its input).
  const id = name ? `section-${name}` : undefined;
  return (
    <section className="panel" id={id} aria-labelledby={id ? `${id}-title` : undefined}>
      <div className="panel-head">
        <h2 id={id ? `${id}-title` : undefined}>{title}</h2>
        {description ? <p className="hint">{description}</p> : null}
      </div>
      <div className="panel-body">{children}</div>
    </section>
  );
}

export function EmptyState({ title, text, action }: { title: string; text: string; action?: React.ReactNode }) {
  return (
    <div className="empty-state">
      <div className="empty-icon" aria-hidden="true">
        ◇
      </div>
      <p className="empty-title">{title}</p>
      <p className="hint">{text}</p>
      {action}
    </div>
  );
}

export function Badge({ children, tone }: { children: React.ReactNode; tone?: "ok" | "warn" | "danger" | "brand" }) {
  return <span className={`badge${tone ? ` badge-${tone}` : ""}`}>{children}</span>;
}

export function FormatDate({ iso }: { iso: string | null }) {
  if (!iso) return <span className="muted">—</span>;
  const d = new Date(iso);
  return <time dateTime={iso}>{d.toISOString().slice(0, 16).replace("T", " ")} UTC</time>;
}

/** A search box as a GET form: filtering reads data only, so it is a link-able URL, not a POST. */
export async function SearchForm({ action, value, label, hidden = {} }: { action: string; value?: string; label: string; hidden?: Record<string, string> }) {
  const t = await getTranslations("console.common");
  return (
    <form method="get" action={action} className="search-form" role="search">
      {Object.entries(hidden).map(([k, v]) => (
        <input key={k} type="hidden" name={k} value={v} />
      ))}
      <label htmlFor="q" className="sr-only">
        {label}
      </label>
      <input id="q" name="q" type="search" defaultValue={value} placeholder={label} />
      <button type="submit" className="btn btn-secondary">
        {t("search")}
      </button>
    </form>
  );
}

type Column = string | { label: string; hidden: true };

/**
 * A data table: its column headings (a hidden one is read by screen readers only, as for an
 * actions column), then its rows. `fit`: headings and cells may wrap, with narrower padding, for a
 * table whose long headings (French, German) would otherwise scroll sideways.
 */
export function DataTable({ columns, children, fit = false }: { columns: Column[]; children: React.ReactNode; fit?: boolean }) {
  return (
    <div className="table-wrap">
      <table className={fit ? "table table-fit" : "table"}>
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th scope="col" key={i}>
                {typeof c === "string" ? c : <span className="sr-only">{c.label}</span>}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
