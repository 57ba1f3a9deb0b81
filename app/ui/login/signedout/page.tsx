import { getTranslations } from "next-intl/server";
import { torii } from "@torii/core/runtime";
import { getSettings } from "@torii/core/store/settings";
import { AuthShell } from "@/app/ui/components/auth-shell";

export const dynamic = "force-dynamic";

/** Where end_session lands when no post-logout redirect URI applies. */
export default async function SignedOutPage() {
  const t = await getTranslations("login");
  const settings = await getSettings(await torii());
  return (
    <AuthShell settings={settings} title={t("signedOut.title")}>
      <p className="muted">{t("signedOut.lead")}</p>
    </AuthShell>
  );
}
