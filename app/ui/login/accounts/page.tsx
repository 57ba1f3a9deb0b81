import { getTranslations } from "next-intl/server";
import { hintMatches } from "@torii/core/oauth/authorize-decision";
import { sessionSatisfies } from "@torii/core/oauth/authorize";
import { LOGIN_PATHS, loginUrl } from "@torii/core/login/paths";
import { Alert, AuthShell, FlowFields } from "@/app/ui/components/auth-shell";
import { loadFlow } from "../flow";
import { FlowExpired } from "../flow-expired";
import { AccountIdentity } from "@/app/ui/components/account-identity";

export const dynamic = "force-dynamic";

export default async function AccountsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const flow = await loadFlow(searchParams);
  if (!flow) return <FlowExpired />;
  const t = await getTranslations("login");
  const { authRequest: req, settings } = flow;
  const now = new Date();
  const hinted = (username: string) => !!req.loginHint && hintMatches(req.loginHint, username, settings.primaryDomain);
  // The hinted account first, the rest alphabetically (as the store returns them).
  const sessions = [...flow.sessions].sort((a, b) => Number(hinted(b.user.username)) - Number(hinted(a.user.username)));
  return (
    <AuthShell settings={settings} title={t("accounts.title")} subtitle={t("continueTo", { client: flow.client.name })}>
      {req.formError === "sessionGone" ? <Alert id="form-error">{t("errors.sessionGone")}</Alert> : null}
      <ul className="account-list">
        {sessions.map((s, i) => {
          const fresh = sessionSatisfies(req, s, now);
          return (
            <li key={s.id}>
              <form method="post" action={LOGIN_PATHS.submitAccount}>
                <FlowFields id={flow.id} csrf={flow.csrf} />
                <input type="hidden" name="sessionId" value={s.id} />
                <button type="submit" className={`account${hinted(s.user.username) ? " account-hinted" : ""}`} autoFocus={i === 0}>
                  <AccountIdentity user={s.user} primaryDomain={settings.primaryDomain} />
                  <span className={`badge${fresh ? " badge-ok" : ""}`}>
                    {hinted(s.user.username) ? t("accounts.hinted") : fresh ? t("accounts.active") : t("accounts.expired")}
                  </span>
                </button>
              </form>
            </li>
          );
        })}
      </ul>
      <a className="btn btn-secondary btn-block" href={loginUrl(LOGIN_PATHS.loginName, flow.id)}>
        {t("accounts.other")}
      </a>
    </AuthShell>
  );
}
