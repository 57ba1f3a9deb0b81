import { dateOf } from "@torii/core/clock";
import { getTranslations } from "next-intl/server";
import { cookies } from "next/headers";
import { torii } from "@torii/core/runtime";
import { LOGOUT_PATHS } from "@torii/core/oauth/end-session";
import { logoutCsrf, openPendingLogout } from "@torii/core/oauth/end-session-request";
import { userAgentCookieName } from "@torii/core/session/user-agent";
import { getClient } from "@torii/core/store/clients";
import { findUserAgent, liveSessions } from "@torii/core/store/sessions";
import { getSettings } from "@torii/core/store/settings";
import { Alert, AuthShell } from "@/app/ui/components/auth-shell";
import { AccountIdentity } from "@/app/ui/components/account-identity";

export const dynamic = "force-dynamic";

/**
 * Asks the user before a logout that end_session could not tie to a client (no valid
 * id_token_hint for someone signed in here), so that a link on another site cannot sign anyone
 * out; the user may also decline and stay signed in. Never framed (frame-ancestors 'none',
 * X-Frame-Options DENY on every page).
 */
export default async function LogoutConfirmPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const sealed = typeof sp.request === "string" ? sp.request : "";
  const inst = await torii();
  const t = await getTranslations("logout");
  const settings = await getSettings(inst);
  const cookie = (await cookies()).get(userAgentCookieName(inst.config.issuer))?.value;
  const ua = cookie ? await findUserAgent(inst.db, cookie) : undefined;
  const pending = ua && sealed ? openPendingLogout(inst.masterKey, sealed, ua.id, inst.clock.now()) : undefined;
  if (!ua || !pending) {
    return (
      <AuthShell settings={settings} title={t("error.title")}>
        <Alert id="error-message">{t("errors.expired")}</Alert>
        <p className="muted">{t("error.advice")}</p>
      </AuthShell>
    );
  }
  const client = pending.client ? await getClient(inst, pending.client) : undefined;
  const sessions = (await liveSessions(inst.db, ua.id, dateOf(inst.clock))).filter((s) => !pending.user || s.userId === pending.user);
  return (
    <AuthShell
      settings={settings}
      title={t("confirm.title")}
      subtitle={client ? t("confirm.leadClient", { client: client.name }) : t("confirm.lead")}
    >
      {sessions.length ? (
        <>
          <p className="muted">{t("confirm.accounts")}</p>
          <ul className="account-list" data-testid="logout-accounts">
            {sessions.map((s) => {
              return (
                <li key={s.id} className="account">
                  <AccountIdentity user={s.user} primaryDomain={settings.primaryDomain} />
                </li>
              );
            })}
          </ul>
        </>
      ) : null}
      <form method="post" action={LOGOUT_PATHS.submit} className="consent-actions">
        <input type="hidden" name="request" value={sealed} />
        <input type="hidden" name="csrf" value={logoutCsrf(inst.masterKey, ua.id, sealed)} />
        <button type="submit" className="btn btn-primary btn-block" autoFocus>
          {t("confirm.submit")}
        </button>
        <button type="submit" name="stay" value="1" className="btn btn-secondary btn-block">
          {t("confirm.stay")}
        </button>
      </form>
    </AuthShell>
  );
}
