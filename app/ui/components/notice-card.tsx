/**
 * A page that only tells something and offers one way on: after leaving one of Torii's own apps
 * (console, account page) or a failed sign-in to it (with a status icon), and an address that
 * names nothing (app/not-found.tsx, without one).
 */
export function NoticeCard({ status, title, text, action, href }: { status?: "ok" | "warn"; title: string; text: string; action: string; href: string }) {
  return (
    <main className="auth-page">
      <div className="auth-card card">
        {status ? (
          <div className={`status-icon status-${status}`} aria-hidden="true">
            {status === "warn" ? "!" : "✓"}
          </div>
        ) : null}
        <h1>{title}</h1>
        <p className="lead">{text}</p>
        <a className="btn btn-primary" href={href}>
          {action}
        </a>
      </div>
    </main>
  );
}
