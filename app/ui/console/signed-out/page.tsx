import { getTranslations } from "next-intl/server";
import { CONSOLE_PATH } from "@torii/core/console/client";
import "../console.css";

export const dynamic = "force-dynamic";

export default async function ConsoleSignedOutPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const sp = await searchParams;
  const t = await getTranslations("console.access");
  const failed = !!sp.failed;
  return (
    <main className="auth-page">
      <div className="auth-card card">
        <div className={`status-icon ${failed ? "status-warn" : "status-ok"}`} aria-hidden="true">
          {failed ? "!" : "✓"}
        </div>
        <h1>{failed ? t("failedTitle") : t("signedOutTitle")}</h1>
        <p className="lead">{failed ? t("failedText") : t("signedOutText")}</p>
        <a className="btn btn-primary" href={`${CONSOLE_PATH}/signin`}>
          {t("signIn")}
        </a>
      </div>
    </main>
  );
}
