import { getTranslations } from "next-intl/server";
import { LOGIN_PATHS, loginUrl } from "@torii/core/login/paths";
import { offersRegistration } from "@torii/core/login/signin-policy";
import { Alert, AuthShell, FlowFields } from "@/app/ui/components/auth-shell";
import { torii } from "@torii/core/runtime";
import { accountPolicyOf } from "@torii/core/login/account-policy";
import { loginPasskeyPrompt } from "@torii/core/login/passkey-handlers";
import { PasskeyForm } from "@/app/ui/components/passkey-form";
import { loadFlow } from "./flow";
import { FlowExpired } from "./flow-expired";
import { lockoutMessage } from "./lockout-message";

export const dynamic = "force-dynamic";

export default async function LoginNamePage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const flow = await loadFlow(searchParams);
  if (!flow) return <FlowExpired />;
  const t = await getTranslations("login");
  const { authRequest: req } = flow;
  const value = req.loginName ?? req.loginHint ?? "";
  let error: string | null = null;
  if (req.formError === "loginNameRequired") error = t("errors.loginNameRequired");
  else if (req.formError === "passkeyFailed") error = t("errors.passkeyFailed");
  // A passkey of an account that is locked for this browser, or tried too often from here.
  else if (req.formError === "throttled" || req.formError === "accountLocked") error = lockoutMessage(t, req.formError, req.formValues);
  // The sign-in policy refused another account than the one the application asked for.
  else if (req.formError === "wrongAccount") {
    error = t("errors.wrongAccount", { signedInAs: req.formValues?.signedInAs ?? "", client: flow.client.name, loginName: value });
  }
  // Passkeys sign in without a name (discoverable credentials), unless second factors are off.
  const passkeys = accountPolicyOf(flow.settings).mfa !== "off" ? await loginPasskeyPrompt(await torii(), flow.id) : null;
  return (
    <AuthShell settings={flow.settings} title={t("loginName.title")} subtitle={t("continueTo", { client: flow.client.name })}>
      <form method="post" action={LOGIN_PATHS.submitLoginName} noValidate>
        <FlowFields id={flow.id} csrf={flow.csrf} />
        {error ? <Alert id="form-error">{error}</Alert> : null}
        <div className="field">
          <label htmlFor="loginName">{t("loginName.label")}</label>
          <input
            id="loginName"
            name="loginName"
            type="text"
            autoComplete={passkeys ? "username webauthn" : "username"}
            autoCapitalize="none"
            spellCheck={false}
            required
            autoFocus
            defaultValue={value}
            placeholder={t("loginName.placeholder")}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? "form-error" : undefined}
          />
        </div>
        <button type="submit" className="btn btn-primary">
          {t("loginName.submit")}
        </button>
      </form>
      {passkeys ? (
        <PasskeyForm
          action={LOGIN_PATHS.submitPasskey}
          fields={{ authRequest: flow.id, csrf: flow.csrf }}
          options={passkeys}
          mode="authenticate"
          label={t("loginName.passkey")}
          failed={t("errors.passkeyFailed")}
          autofill
        />
      ) : null}
      {offersRegistration(req) && flow.settings.accountPolicy.registration ? (
        <p className="auth-alt">
          {t("loginName.noAccount")} <a href={loginUrl(LOGIN_PATHS.register, flow.id)}>{t("loginName.register")}</a>
        </p>
      ) : null}
    </AuthShell>
  );
}
