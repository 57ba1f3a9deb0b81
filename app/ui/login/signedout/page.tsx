import { getTranslations } from "next-intl/server";
import { instance } from "@/lib/instance";
import { getSettings } from "@/lib/store/settings";
import { AuthShell } from "@/app/ui/components/auth-shell";

export const dynamic = "force-dynamic";

/** Where end_session lands when no post-logout redirect URI applies. */
export default async function SignedOutPage() {
  const t = await getTranslations("login");
  const settings = await getSettings((await instance()).db);
  return (
    <AuthShell settings={settings} title={t("signedOut.title")}>
      <p className="muted">{t("signedOut.lead")}</p>
    </AuthShell>
  );
}
