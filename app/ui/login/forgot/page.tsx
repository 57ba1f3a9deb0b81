import { getTranslations } from "next-intl/server";
import { LOGIN_PATHS, loginUrl } from "@torii/core/login/paths";
import { Alert, AuthShell, FlowFields } from "@/app/ui/components/auth-shell";
import { loadFlow } from "../flow";
import { FlowExpired } from "../flow-expired";

export const dynamic = "force-dynamic";

/** "Forgot password?": the login name or email address to send a reset link to. */
export default async function ForgotPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const flow = await loadFlow(searchParams);
  if (!flow) return <FlowExpired />;
  const { authRequest: req } = flow;
  const t = await getTranslations("login");
  const error = req.formError === "loginNameRequired" ? t("errors.loginNameRequired") : null;
  return (
    <AuthShell settings={flow.settings} title={t("forgot.title")} subtitle={t("continueTo", { client: flow.client.name })}>
      <p className="muted">{t("forgot.lead")}</p>
      <form method="post" action={LOGIN_PATHS.submitForgot}>
        <FlowFields id={flow.id} csrf={flow.csrf} />
        {error ? <Alert id="form-error">{error}</Alert> : null}
        <div className="field">
          <label htmlFor="loginName">{t("forgot.label")}</label>
          <input
            id="loginName"
            name="loginName"
            type="text"
            autoComplete="username"
            required
            autoFocus
            defaultValue={req.loginName ?? ""}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? "form-error" : undefined}
          />
        </div>
        <button type="submit" className="btn btn-primary">
          {t("forgot.submit")}
        </button>
      </form>
      <p className="auth-alt">
        <a href={loginUrl(req.loginName ? LOGIN_PATHS.password : LOGIN_PATHS.loginName, flow.id)}>{t("forgot.back")}</a>
      </p>
    </AuthShell>
  );
}
