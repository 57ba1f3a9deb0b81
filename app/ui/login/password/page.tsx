import { getTranslations } from "next-intl/server";
import { redirect } from "next/navigation";
import { LOGIN_PATHS, loginUrl } from "@torii/core/login/paths";
import { Alert, AuthShell, FlowFields } from "@/app/ui/components/auth-shell";
import { torii } from "@torii/core/runtime";
import { accountPolicyOf } from "@torii/core/login/account-policy";
import { loginPasskeyPrompt } from "@torii/core/login/passkey-handlers";
import { PasskeyForm } from "@/app/ui/components/passkey-form";
import { loadFlow } from "../flow";
import { FlowExpired } from "../flow-expired";
import { lockoutMessage } from "../lockout-message";

export const dynamic = "force-dynamic";

export default async function PasswordPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const flow = await loadFlow(searchParams);
  if (!flow) return <FlowExpired />;
  const { authRequest: req } = flow;
  if (!req.loginName) redirect(loginUrl(LOGIN_PATHS.loginName, flow.id));
  const t = await getTranslations("login");
  let error: string | null = null;
  if (req.formError === "invalid") error = t("errors.invalid");
  else if (req.formError === "userLocked") error = t("errors.userLocked");
  else if (req.formError === "passkeyFailed") error = t("errors.passkeyFailed");
  else error = lockoutMessage(t, req.formError, req.formValues);
  // A passkey instead of the password, as on the first page (a sign-in again for max_age or
  // prompt=login lands here). Offered whatever the login name, so it tells nothing about it.
  const passkeys = accountPolicyOf(flow.settings).mfa !== "off" ? await loginPasskeyPrompt(await torii(), flow.id) : null;
  return (
    <AuthShell settings={flow.settings} title={t("password.title")} subtitle={t("continueTo", { client: flow.client.name })}>
      <div className="identity-chip" data-testid="login-name">
        <span className="avatar" aria-hidden="true">
          {req.loginName.slice(0, 1).toUpperCase()}
        </span>
        <span className="identity-name">{req.loginName}</span>
      </div>
      <form method="post" action={LOGIN_PATHS.submitPassword}>
        <FlowFields id={flow.id} csrf={flow.csrf} />
        {/* Lets password managers pair the password with the login name. */}
        <input type="text" name="username" autoComplete="username" value={req.loginName} readOnly hidden />
        {error ? <Alert id="form-error">{error}</Alert> : null}
        <div className="field">
          <label htmlFor="password">{t("password.label")}</label>
          <input
            id="password"
            name="password"
            type="password"
            autoComplete="current-password"
            required
            autoFocus
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? "form-error" : undefined}
          />
        </div>
        <button type="submit" className="btn btn-primary">
          {t("password.submit")}
        </button>
      </form>
      {passkeys ? (
        <PasskeyForm
          action={LOGIN_PATHS.submitPasskey}
          fields={{ authRequest: flow.id, csrf: flow.csrf, page: "password" }}
          options={passkeys}
          mode="authenticate"
          label={t("loginName.passkey")}
          failed={t("errors.passkeyFailed")}
        />
      ) : null}
      <p className="auth-alt">
        <a href={loginUrl(LOGIN_PATHS.forgot, flow.id)}>{t("password.forgot")}</a>
      </p>
      <p className="auth-alt">
        <a href={loginUrl(LOGIN_PATHS.loginName, flow.id)}>{t("password.notYou")}</a>
      </p>
    </AuthShell>
  );
}
