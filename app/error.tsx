"use client";

import { useTranslations } from "next-intl";

/**
 * What a page shows when it fails on the server, in the browser's language, instead of Next's
 * English default: most often the database is out of reach for a moment (a restart, a failover;
 * the endpoints answer 503 then, lib/db/unavailable.ts). Nothing of the error is shown; the
 * server logged it. "Try again" loads the page again (a reset would render only on the client, and
 * the failure was on the server).
 */
export default function PageError() {
  const t = useTranslations("pageError");
  return (
    <main className="auth-page">
      <div className="auth-card card" role="alert">
        <h1>{t("title")}</h1>
        <p className="lead">{t("lead")}</p>
        <button type="button" className="btn btn-primary" onClick={() => { window.location.reload(); }}>
          {t("retry")}
        </button>
      </div>
    </main>
  );
}
