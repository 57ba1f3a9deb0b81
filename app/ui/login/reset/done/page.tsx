import { getTranslations } from "next-intl/server";
import { torii } from "@torii/core/runtime";
import { getSettings } from "@torii/core/store/settings";
import { AuthShell } from "@/app/ui/components/auth-shell";

export const dynamic = "force-dynamic";

/** After a reset: every session ended, so the user signs in again at the application. */
export default async function ResetDonePage() {
  const t = await getTranslations("login");
  const settings = await getSettings(await torii());
  return (
    <AuthShell settings={settings} title={t("reset.doneTitle")}>
      <p className="muted">{t("reset.doneLead")}</p>
    </AuthShell>
  );
}
