import { getTranslations } from "next-intl/server";
import { torii } from "@torii/core/runtime";
import { getSettings } from "@torii/core/store/settings";
import { Alert, AuthShell } from "@/app/ui/components/auth-shell";

/** Shown when a login page is opened without a pending request of this browser. */
export async function FlowExpired({ code = "expired" }: { code?: string }) {
  const t = await getTranslations();
  const settings = await getSettings(await torii());
  const known = ["expired", "csrf", "badRequest", "serverError"].includes(code) ? code : "expired";
  return (
    <AuthShell settings={settings} title={t("login.error.title")}>
      <Alert id="error-message">{t(`errors.${known}`)}</Alert>
      <p className="muted">{t("errors.advice")}</p>
    </AuthShell>
  );
}
