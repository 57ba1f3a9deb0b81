import { getTranslations } from "next-intl/server";
import { torii } from "@torii/core/runtime";
import { LOGIN_PATHS } from "@torii/core/login/paths";
import { Alert, AuthShell, FlowFields } from "@/app/ui/components/auth-shell";
import { loadAccountStep } from "../flow";
import { FlowExpired } from "../flow-expired";

export const dynamic = "force-dynamic";

/** a•••@example.com: enough for the owner to recognise, little for anyone else. */
function masked(email: string): string {
  const at = email.lastIndexOf("@");
  return at <= 0 ? email : `${email[0]}•••${email.slice(at)}`;
}

/** The code mailed to the address, when the instance requires verified addresses (the policy's `verifyEmail` step). */
export default async function VerifyEmailPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const gate = await loadAccountStep(searchParams, "verifyEmail");
  if (!gate) return <FlowExpired />;
  const { flow, account } = gate;
  const t = await getTranslations("login");
  const { authRequest: req, settings, client } = flow;
  const inst = await torii();
  const user = await inst.store.users.get(account.userId);
  const notice = req.formError === "codeSent" ? t("verifyEmail.sent") : null;
  const error = req.formError === "wrongCode" ? t("verifyEmail.wrongCode") : req.formError === "resendLimited" ? t("verifyEmail.resendLimited") : null;
  return (
    <AuthShell settings={settings} title={t("verifyEmail.title")} subtitle={t("continueTo", { client: client.name })}>
      <p className="muted" id="verify-lead">
        {t("verifyEmail.lead", { email: masked(user?.email ?? "") })}
      </p>
      {notice ? (
        <div className="alert alert-ok" role="status">
          {notice}
        </div>
      ) : null}
      <form method="post" action={LOGIN_PATHS.submitVerifyEmail}>
        <FlowFields id={flow.id} csrf={flow.csrf} />
        {error ? <Alert id="form-error">{error}</Alert> : null}
        <div className="field">
          <label htmlFor="code">{t("verifyEmail.code")}</label>
          <input
            id="code"
            name="code"
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="[0-9 ]{6,7}"
            maxLength={7}
            required
            autoFocus
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? "form-error" : "verify-lead"}
          />
        </div>
        <button type="submit" name="action" value="verify" className="btn btn-primary">
          {t("verifyEmail.submit")}
        </button>
      </form>
      <form method="post" action={LOGIN_PATHS.submitVerifyEmail} className="auth-alt">
        <FlowFields id={flow.id} csrf={flow.csrf} />
        <button type="submit" name="action" value="resend" className="btn btn-link">
          {t("verifyEmail.resend")}
        </button>
      </form>
    </AuthShell>
  );
}
