import { getTranslations } from "next-intl/server";
import { torii } from "@torii/core/runtime";
import { LOGOUT_ERRORS } from "@torii/core/oauth/end-session";
import { getSettings } from "@torii/core/store/settings";
import { Alert, AuthShell } from "@/app/ui/components/auth-shell";

export const dynamic = "force-dynamic";

/** Where end_session sends a request it refuses: shown to the user, never redirected to the client. */
export default async function LogoutErrorPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const reason = (LOGOUT_ERRORS as readonly string[]).find((r) => r === sp.reason) ?? "badRequest";
  const t = await getTranslations("logout");
  const settings = await getSettings(await torii());
  return (
    <AuthShell settings={settings} title={t("error.title")}>
      <Alert id="error-message">{t(`errors.${reason}`)}</Alert>
      <p className="muted">{t("error.advice")}</p>
    </AuthShell>
  );
}
