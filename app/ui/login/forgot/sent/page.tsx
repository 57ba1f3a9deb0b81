import { getTranslations } from "next-intl/server";
import { LOGIN_PATHS, loginUrl } from "@torii/core/login/paths";
import { AuthShell } from "@/app/ui/components/auth-shell";
import { loadFlow } from "../../flow";
import { FlowExpired } from "../../flow-expired";

export const dynamic = "force-dynamic";

/** The same page whether or not an account matched (no user enumeration). */
export default async function ForgotSentPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const flow = await loadFlow(searchParams);
  if (!flow) return <FlowExpired />;
  const t = await getTranslations("login");
  const minutes = Math.round(flow.settings.accountPolicy.passwordResetLinkSeconds / 60);
  return (
    <AuthShell settings={flow.settings} title={t("forgot.sentTitle")}>
      <p className="muted">{t("forgot.sentLead", { minutes })}</p>
      <p className="auth-alt">
        <a href={loginUrl(LOGIN_PATHS.loginName, flow.id)}>{t("forgot.back")}</a>
      </p>
    </AuthShell>
  );
}
