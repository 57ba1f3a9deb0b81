import { getTranslations } from "next-intl/server";
import { LOGIN_PATHS } from "@torii/core/login/paths";
import { Alert, AuthShell, FlowFields } from "@/app/ui/components/auth-shell";
import { loadAccountStep } from "../../flow";
import { FlowExpired } from "../../flow-expired";
import { NewPasswordFields } from "../../new-password-fields";
import { newPasswordError } from "../../password-policy-message";

export const dynamic = "force-dynamic";

/**
 * The policy's `changePassword` step: the password just proven is due for a change. The current
 * one is not asked again (the sign-in has just checked it); the new one twice.
 */
export default async function ChangePasswordPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const gate = await loadAccountStep(searchParams, "changePassword");
  if (!gate) return <FlowExpired />;
  const { flow, account } = gate;
  const t = await getTranslations("login");
  const { authRequest: req, settings, client } = flow;
  const policy = settings.passwordPolicy;
  const error = req.formError === "samePassword" ? t("changePassword.samePassword") : newPasswordError(t, req.formError, req.formValues?.violations, policy.minLength);
  const lead = account.passwordChangeRequiredSince ? t("changePassword.leadRequired") : t("changePassword.leadExpired");
  return (
    <AuthShell settings={settings} title={t("changePassword.title")} subtitle={t("continueTo", { client: client.name })}>
      <p className="muted" id="change-lead">
        {lead}
      </p>
      <form method="post" action={LOGIN_PATHS.submitChangePassword}>
        <FlowFields id={flow.id} csrf={flow.csrf} />
        {/* Lets password managers store the new password with the account. */}
        <input type="text" name="username" autoComplete="username" value={account.username} readOnly hidden />
        {error ? <Alert id="form-error">{error}</Alert> : null}
        <NewPasswordFields label={t("changePassword.password")} confirmLabel={t("changePassword.confirm")} hint={t("changePassword.hint", { min: policy.minLength })} error={error} />
        <button type="submit" className="btn btn-primary">
          {t("changePassword.submit")}
        </button>
      </form>
    </AuthShell>
  );
}
