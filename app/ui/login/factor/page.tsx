import { getTranslations } from "next-intl/server";
import { torii } from "@torii/core/runtime";
import { LOGIN_PATHS } from "@torii/core/login/paths";
import { Alert, AuthShell, FlowFields } from "@/app/ui/components/auth-shell";
import { hasPasskey } from "@torii/core/login/passkeys";
import { loginPasskeyPrompt } from "@torii/core/login/passkey-handlers";
import { listFactors } from "@torii/core/store/factors";
import { PasskeyForm } from "@/app/ui/components/passkey-form";
import { loadAccountStep } from "../flow";
import { FlowExpired } from "../flow-expired";
import { lockoutMessage } from "../lockout-message";

export const dynamic = "force-dynamic";

/** The policy's `secondFactor` step: a code of the user's authenticator, or a recovery code. */
export default async function SecondFactorPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const gate = await loadAccountStep(searchParams, "secondFactor");
  if (!gate) return <FlowExpired />;
  const { flow, account } = gate;
  const t = await getTranslations("login");
  const { authRequest: req, settings, client } = flow;
  const inst = await torii();
  const error =
    req.formError === "wrongCode" ? t("secondFactor.wrongCode") : req.formError === "passkeyFailed" ? t("errors.passkeyFailed") : lockoutMessage(t, req.formError, req.formValues);
  const userId = account.userId;
  const passkeys = (await hasPasskey(inst, userId)) ? await loginPasskeyPrompt(inst, flow.id, userId) : null;
  const hasApp = (await listFactors(inst.db, userId)).some((f) => f.type === "totp");
  return (
    <AuthShell settings={settings} title={t("secondFactor.title")} subtitle={t("continueTo", { client: client.name })}>
      <p className="muted" id="factor-lead">
        {hasApp ? t("secondFactor.lead", { account: account.username }) : t("secondFactor.leadPasskey", { account: account.username })}
      </p>
      {passkeys ? (
        <PasskeyForm
          action={LOGIN_PATHS.submitSecondFactor}
          fields={{ authRequest: flow.id, csrf: flow.csrf }}
          options={passkeys}
          mode="authenticate"
          label={t("secondFactor.passkey")}
          failed={t("errors.passkeyFailed")}
          secondary={hasApp}
        />
      ) : null}
      <form method="post" action={LOGIN_PATHS.submitSecondFactor}>
        <FlowFields id={flow.id} csrf={flow.csrf} />
        {error ? <Alert id="form-error">{error}</Alert> : null}
        <div className="field">
          <label htmlFor="code">{hasApp ? t("secondFactor.code") : t("secondFactor.recoveryCode")}</label>
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
            aria-describedby={[error ? "form-error" : "", hasApp ? "factor-hint" : ""].filter(Boolean).join(" ") || undefined}
          />
          {hasApp ? (
            <p className="hint" id="factor-hint">
              {t("secondFactor.recoveryHint")}
            </p>
          ) : null}
        </div>
        <button type="submit" className="btn btn-primary">
          {t("secondFactor.submit")}
        </button>
      </form>
    </AuthShell>
  );
}
