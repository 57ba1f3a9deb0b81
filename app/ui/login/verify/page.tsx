import { dateOf } from "@torii/core/clock";
import { getTranslations } from "next-intl/server";
import { torii } from "@torii/core/runtime";
import { LOGIN_PATHS } from "@torii/core/login/paths";
import { emailTokenOpen } from "@torii/core/store/email-verifications";
import { getSettings } from "@torii/core/store/settings";
import { AuthShell } from "@/app/ui/components/auth-shell";

export const dynamic = "force-dynamic";

/** The mail's link: a button that confirms the address (opening the link alone changes nothing), then the outcome. */
export default async function VerifyLinkPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const t = await getTranslations("login");
  const inst = await torii();
  const settings = await getSettings(inst);
  const token = typeof sp.token === "string" ? sp.token : "";
  if (sp.result === "verified") {
    return (
      <AuthShell settings={settings} title={t("verifyLink.doneTitle")}>
        <p className="muted">{t("verifyLink.doneLead")}</p>
      </AuthShell>
    );
  }
  if (sp.result === "invalid" || !token || !(await emailTokenOpen(inst.db, inst.masterKey, token, dateOf(inst.clock)))) {
    return (
      <AuthShell settings={settings} title={t("verifyLink.invalidTitle")}>
        <p className="muted">{t("verifyLink.invalidLead")}</p>
      </AuthShell>
    );
  }
  return (
    <AuthShell settings={settings} title={t("verifyLink.title")}>
      <p className="muted">{t("verifyLink.lead")}</p>
      <form method="post" action={LOGIN_PATHS.submitVerifyLink}>
        <input type="hidden" name="token" value={token} />
        <button type="submit" className="btn btn-primary">
          {t("verifyLink.submit")}
        </button>
      </form>
    </AuthShell>
  );
}
