import { getTranslations } from "next-intl/server";
import { redirect } from "next/navigation";
import { torii } from "@torii/core/runtime";
import { pendingStep } from "@torii/core/login/steps";
import { CALLBACK_PATH, LOGIN_PATHS } from "@torii/core/login/paths";
import { Alert, AuthShell, FlowFields } from "@/app/ui/components/auth-shell";
import { loadFlow } from "../flow";
import { FlowExpired } from "../flow-expired";
import { lockoutMessage } from "../lockout-message";

export const dynamic = "force-dynamic";

/** The policy's `secondFactor` step: a code of the user's authenticator, or a recovery code. */
export default async function SecondFactorPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const flow = await loadFlow(searchParams);
  if (!flow) return <FlowExpired />;
  const t = await getTranslations("login");
  const { authRequest: req, settings, client } = flow;
  const inst = await torii();
  const step = await pendingStep(inst.store, req, client, settings.primaryDomain);
  if (step.step !== "secondFactor") redirect(`${CALLBACK_PATH}?id=${encodeURIComponent(flow.id)}`);
  const error = req.formError === "wrongCode" ? t("secondFactor.wrongCode") : lockoutMessage(t, req.formError, req.formValues);
  return (
    <AuthShell settings={settings} title={t("secondFactor.title")} subtitle={t("continueTo", { client: client.name })}>
      <p className="muted" id="factor-lead">
        {t("secondFactor.lead", { account: step.account.username })}
      </p>
      <form method="post" action={LOGIN_PATHS.submitSecondFactor}>
        <FlowFields id={flow.id} csrf={flow.csrf} />
        {error ? <Alert id="form-error">{error}</Alert> : null}
        <div className="field">
          <label htmlFor="code">{t("secondFactor.code")}</label>
          {/* One field for both: 6 digits from the app, or a recovery code (xxxxx-xxxxx). */}
          <input
            id="code"
            name="code"
            autoComplete="one-time-code"
            autoCapitalize="none"
            spellCheck={false}
            maxLength={24}
            required
            autoFocus
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? "form-error factor-hint" : "factor-hint"}
          />
          <p className="hint" id="factor-hint">
            {t("secondFactor.recoveryHint")}
          </p>
        </div>
        <button type="submit" className="btn btn-primary">
          {t("secondFactor.submit")}
        </button>
      </form>
    </AuthShell>
  );
}
