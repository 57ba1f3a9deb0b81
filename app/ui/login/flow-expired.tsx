import { getTranslations } from "next-intl/server";
import { instance } from "@/lib/instance";
import { getSettings } from "@/lib/store/settings";
import { Alert, AuthShell } from "@/app/ui/components/auth-shell";

/** Shown when a login page is opened without a pending request of this browser. */
export async function FlowExpired({ code = "expired" }: { code?: string }) {
  const t = await getTranslations();
  const settings = await getSettings((await instance()).db);
  const known = ["expired", "csrf", "badRequest", "serverError"].includes(code) ? code : "expired";
  return (
    <AuthShell settings={settings} title={t("login.error.title")}>
      <Alert id="error-message">{t(`errors.${known}`)}</Alert>
      <p className="muted">{t("errors.advice")}</p>
    </AuthShell>
  );
}
