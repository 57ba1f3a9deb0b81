import { hasMessage } from "@torii/core/i18n/messages";
import { getLocale, getTranslations } from "next-intl/server";
import { torii } from "@torii/core/runtime";
import { LOGIN_PATHS } from "@torii/core/login/paths";
import { AuthShell, FlowFields } from "@/app/ui/components/auth-shell";
import { AccountIdentity } from "@/app/ui/components/account-identity";
import { consentApiGroups } from "@torii/core/oauth/resources";
import { askedConsent } from "@torii/core/login/consent-set";
import { loadAccountStep } from "../flow";
import { FlowExpired } from "../flow-expired";

export const dynamic = "force-dynamic";

/** The consent screen of a third-party application (the sign-in policy's `consent` step). */
export default async function ConsentPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const gate = await loadAccountStep(searchParams, "consent");
  if (!gate) return <FlowExpired />;
  const { flow, account } = gate;
  const t = await getTranslations("login");
  const { authRequest: req, settings, client } = flow;
  // The protocol's scopes have texts of ours; each API's scopes its own, per locale, grouped
  // under the API's name (what the user allows is remembered per API: consent-set.ts).
  const locale = await getLocale();
  const apis = await (await torii()).store.apis.list();
  const asked = askedConsent(req.scopes, req.resources, apis);
  const groups = consentApiGroups(apis, asked.apis, locale);
  const describe = (scope: string) => (hasMessage(t, `consent.scopes.${scope}`) ? t(`consent.scopes.${scope}` as never) : scope);
  return (
    <AuthShell settings={settings} title={t("consent.title")} subtitle={t("continueTo", { client: client.name })}>
      <div className="consent-account">
        <span className="muted">{t("consent.signedInAs")}</span>
        <AccountIdentity user={account.user} primaryDomain={settings.primaryDomain} />
      </div>
      <p id="consent-intro">{t("consent.intro", { client: client.name })}</p>
      {asked.scopes.length ? (
        <section className="consent-group" aria-labelledby="consent-account">
          <h2 id="consent-account">{t("consent.accountGroup")}</h2>
          <ul className="consent-scopes">
            {asked.scopes.map((scope) => (
              <li key={scope}>
                <span>{describe(scope)}</span> <code className="muted">{scope}</code>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {groups.map((api, i) => (
        <section key={api.identifier} className="consent-group" aria-labelledby={`consent-api-${i}`}>
          <h2 id={`consent-api-${i}`}>{api.name}</h2>
          <ul className="consent-scopes">
            {api.scopes.length ? (
              api.scopes.map((scope) => (
                <li key={scope.name}>
                  <span>{scope.description}</span> <code className="muted">{scope.name}</code>
                </li>
              ))
            ) : (
              <li>
                <span>{t("consent.apiAccess", { api: api.name })}</span>
              </li>
            )}
          </ul>
        </section>
      ))}
      <p className="hint">{t("consent.note", { client: client.name })}</p>
      <form method="post" action={LOGIN_PATHS.submitConsent} className="consent-actions">
        <FlowFields id={flow.id} csrf={flow.csrf} />
        <button type="submit" name="decision" value="allow" className="btn btn-primary btn-block" autoFocus>
          {t("consent.allow")}
        </button>
        <button type="submit" name="decision" value="deny" className="btn btn-secondary btn-block">
          {t("consent.deny")}
        </button>
      </form>
    </AuthShell>
  );
}
