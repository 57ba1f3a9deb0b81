/** The page after leaving one of Torii's own apps (console, account page), or after its sign-in failed. */
export function SignedOutCard({ failed, title, text, signIn, href }: { failed: boolean; title: string; text: string; signIn: string; href: string }) {
  return (
    <main className="auth-page">
      <div className="auth-card card">
        <div className={`status-icon ${failed ? "status-warn" : "status-ok"}`} aria-hidden="true">
          {failed ? "!" : "✓"}
        </div>
        <h1>{title}</h1>
        <p className="lead">{text}</p>
        <a className="btn btn-primary" href={href}>
          {signIn}
        </a>
      </div>
    </main>
  );
}
