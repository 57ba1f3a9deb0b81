import { getTranslations } from "next-intl/server";
import { ACCOUNT_PATH } from "@torii/core/account/app";

export const dynamic = "force-dynamic";

export default async function AccountSignedOutPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const sp = await searchParams;
  const t = await getTranslations("account");
  const failed = !!sp.failed;
  return (
    <main className="auth-page">
      <div className="auth-card card">
        <div className={`status-icon ${failed ? "status-warn" : "status-ok"}`} aria-hidden="true">
          {failed ? "!" : "✓"}
        </div>
        <h1>{failed ? t("signedOut.failedTitle") : t("signedOut.title")}</h1>
        <p className="lead">{failed ? t("signedOut.failedText") : t("signedOut.text")}</p>
        <a className="btn btn-primary" href={`${ACCOUNT_PATH}/signin`}>
          {t("signedOut.signIn")}
        </a>
      </div>
    </main>
  );
}
