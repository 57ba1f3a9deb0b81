import { getTranslations } from "next-intl/server";
import { torii } from "@torii/core/runtime";
import { LOGIN_PATHS } from "@torii/core/login/paths";
import { resetLinkUser } from "@torii/core/login/password-reset";
import { getSettings } from "@torii/core/store/settings";
import { Alert, AuthShell } from "@/app/ui/components/auth-shell";
import { NewPasswordFields } from "../new-password-fields";
import { newPasswordError } from "../password-policy-message";

export const dynamic = "force-dynamic";

/** The mailed reset link: choose a new password, or a clear page when the link no longer works. */
export default async function ResetPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const token = typeof sp.token === "string" ? sp.token : "";
  const t = await getTranslations("login");
  const inst = await torii();
  const settings = await getSettings(inst);
  const user = token ? await resetLinkUser(inst, token) : undefined;
  if (!user) {
    return (
      <AuthShell settings={settings} title={t("reset.invalidTitle")}>
        <p className="muted">{t("reset.invalidLead")}</p>
      </AuthShell>
    );
  }
  const error = newPasswordError(t, sp.error, sp.violations, settings.passwordPolicy.minLength);
  return (
    <AuthShell settings={settings} title={t("reset.title")}>
      <p className="muted">{t("reset.lead", { name: user.username })}</p>
      <form method="post" action={LOGIN_PATHS.submitReset}>
        <input type="hidden" name="token" value={token} />
        {/* Lets password managers store the new password with the account. */}
        <input type="text" name="username" autoComplete="username" value={user.username} readOnly hidden />
        {error ? <Alert id="form-error">{error}</Alert> : null}
        <NewPasswordFields label={t("reset.password")} confirmLabel={t("reset.confirm")} error={error} />
        <button type="submit" className="btn btn-primary">
          {t("reset.submit")}
        </button>
      </form>
    </AuthShell>
  );
}
