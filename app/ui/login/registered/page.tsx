import { getTranslations } from "next-intl/server";
import { LOGIN_PATHS, loginUrl } from "@torii/core/login/paths";
import { AuthShell } from "@/app/ui/components/auth-shell";
import { loadFlow } from "../flow";
import { FlowExpired } from "../flow-expired";

export const dynamic = "force-dynamic";

/**
 * After a sign-up: the same page whether an account was created or the username or email was
 * taken, so that registration never tells whether a name exists. It says so honestly and sends
 * the person on to the password step with the chosen username.
 */
export default async function RegisteredPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const flow = await loadFlow(searchParams);
  if (!flow) return <FlowExpired />;
  const t = await getTranslations("login");
  const username = flow.authRequest.loginName ?? "";
  return (
    <AuthShell settings={flow.settings} title={t("registered.title")} subtitle={t("continueTo", { client: flow.client.name })}>
      <p data-testid="registered-lead">{t("registered.lead", { username })}</p>
      <p className="muted">{t("registered.taken")}</p>
      <a className="btn btn-primary" href={loginUrl(LOGIN_PATHS.password, flow.id)}>
        {t("registered.signIn")}
      </a>
      <p className="auth-alt">
        <a href={loginUrl(LOGIN_PATHS.register, flow.id)}>{t("registered.again")}</a>
      </p>
    </AuthShell>
  );
}
