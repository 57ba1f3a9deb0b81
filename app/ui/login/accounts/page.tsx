import { getTranslations } from "next-intl/server";
import { torii } from "@torii/core/runtime";
import { consentRequestOf, loadPolicyInput, policyRequestOf } from "@torii/core/login/steps";
import { chooserEntries } from "@torii/core/login/signin-policy";
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
  // The sign-in policy says which accounts may finish this request and which need a sign-in first.
  const input = await loadPolicyInput((await torii()).store, {
    request: policyRequestOf(req),
    userAgentId: req.userAgentId,
    chosenSessionId: null,
    primaryDomain: settings.primaryDomain,
    now: new Date(),
    consent: consentRequestOf(req, flow.client),
  });
  const entries = chooserEntries(input);
  return (
    <AuthShell settings={settings} title={t("accounts.title")} subtitle={t("continueTo", { client: flow.client.name })}>
      {req.formError === "sessionGone" ? <Alert id="form-error">{t("errors.sessionGone")}</Alert> : null}
      <ul className="account-list">
        {entries.map(({ account: s, hinted, ready }, i) => (
          <li key={s.id}>
            <form method="post" action={LOGIN_PATHS.submitAccount}>
              <FlowFields id={flow.id} csrf={flow.csrf} />
              <input type="hidden" name="sessionId" value={s.id} />
              <button type="submit" className={`account${hinted ? " account-hinted" : ""}`} autoFocus={i === 0}>
                <AccountIdentity user={s.user} primaryDomain={settings.primaryDomain} />
                <span className={`badge${ready ? " badge-ok" : ""}`}>{hinted ? t("accounts.hinted") : ready ? t("accounts.active") : t("accounts.expired")}</span>
              </button>
            </form>
          </li>
        ))}
      </ul>
      <a className="btn btn-secondary btn-block" href={loginUrl(LOGIN_PATHS.loginName, flow.id)}>
        {t("accounts.other")}
      </a>
    </AuthShell>
  );
}
