import { getTranslations } from "next-intl/server";
import { redirect } from "next/navigation";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { currentAccess } from "@/app/_server/console-next";
import "../console.css";

export const dynamic = "force-dynamic";

/** For a signed-in user without the admin role: who they are, and nothing of the console's data. */
export default async function NotAllowedPage() {
  const access = await currentAccess();
  if (access.status === "admin") redirect(CONSOLE_PATH);
  const t = await getTranslations("console.access");
  return (
    <main className="auth-page">
      <div className="auth-card card">
        <div className="status-icon status-warn" aria-hidden="true">
          !
        </div>
        <h1>{t("deniedTitle")}</h1>
        <p className="lead">
          {access.status === "denied" ? t("deniedText", { name: access.user.username }) : t("deniedNoSession")}
        </p>
        <div className="stack">
          <a className="btn btn-primary" href={`${CONSOLE_PATH}/signin?prompt=select_account`}>
            {t("otherAccount")}
          </a>
          {access.status === "denied" ? (
            <form method="post" action={`${CONSOLE_PATH}/signout`}>
              <input type="hidden" name="csrf" value={access.csrf} />
              <button type="submit" className="btn btn-secondary btn-block">
                {t("signOut")}
              </button>
            </form>
          ) : null}
        </div>
      </div>
    </main>
  );
}
