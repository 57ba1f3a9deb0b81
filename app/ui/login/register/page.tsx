import { getTranslations } from "next-intl/server";
import { redirect } from "next/navigation";
import { LOGIN_PATHS, loginUrl } from "@torii/core/login/paths";
import { offersRegistration } from "@torii/core/login/signin-policy";
import { accountPolicyOf } from "@torii/core/login/account-policy";
import { Alert, AuthShell, FlowFields } from "@/app/ui/components/auth-shell";
import { loadFlow } from "../flow";
import { FlowExpired } from "../flow-expired";
import { passwordPolicyMessage } from "../password-policy-message";

export const dynamic = "force-dynamic";

const FIELDS = [
  { name: "username", type: "text", autoComplete: "username" },
  { name: "email", type: "email", autoComplete: "email" },
  { name: "givenName", type: "text", autoComplete: "given-name" },
  { name: "familyName", type: "text", autoComplete: "family-name" },
  { name: "password", type: "password", autoComplete: "new-password" },
  { name: "passwordConfirmation", type: "password", autoComplete: "new-password" },
] as const;

export default async function RegisterPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const flow = await loadFlow(searchParams);
  if (!flow) return <FlowExpired />;
  // A new account can never be the user an id_token_hint names: sign in instead.
  if (!offersRegistration(flow.authRequest)) redirect(loginUrl(LOGIN_PATHS.loginName, flow.id));
  const t = await getTranslations("login");
  // Self-registration switched off: a clear page with the way back, also for prompt=create.
  if (!flow.settings.accountPolicy.registration) {
    return (
      <AuthShell settings={flow.settings} title={t("register.closedTitle")}>
        <p className="muted">{t("register.closedLead")}</p>
        <p className="auth-alt">
          <a href={loginUrl(LOGIN_PATHS.loginName, flow.id)}>{t("register.closedSignIn")}</a>
        </p>
      </AuthShell>
    );
  }
  const formError = flow.authRequest.formError;
  const values = formError === "register" || formError === "registerThrottled" ? (flow.authRequest.formValues ?? {}) : {};
  const policy = flow.settings.passwordPolicy;
  const errorOf = (field: string): string | null => {
    const raw = values[`error.${field}`];
    if (!raw) return null;
    const [key, ...violations] = raw.split(",");
    if (key !== "passwordPolicy") return t(`errors.${key}`);
    return passwordPolicyMessage(t, violations, policy.minLength);
  };
  // Whether the given and family name are asked (settings registration.names).
  const names = accountPolicyOf(flow.settings).registrationNames;
  const hasErrors = FIELDS.some((f) => errorOf(f.name));
  const firstError = FIELDS.find((f) => errorOf(f.name))?.name;
  return (
    <AuthShell settings={flow.settings} title={t("register.title")} subtitle={t("register.lead")}>
      <form method="post" action={LOGIN_PATHS.submitRegister} noValidate>
        <FlowFields id={flow.id} csrf={flow.csrf} />
        {hasErrors ? <Alert id="form-error">{t("errors.summary")}</Alert> : null}
        {formError === "registerThrottled" ? <Alert id="form-error">{t("errors.registerThrottled")}</Alert> : null}
        {names === "hidden" ? null : (
          <div className="field-row">
            {FIELDS.filter((f) => f.name === "givenName" || f.name === "familyName").map((f) => (
              <Field
                key={f.name}
                f={f}
                label={names === "optional" ? `${t(`register.${f.name}`)} ${t("register.optional")}` : t(`register.${f.name}`)}
                value={values[f.name]}
                error={errorOf(f.name)}
                focus={firstError ? firstError === f.name : f.name === "givenName"}
              />
            ))}
          </div>
        )}
        {FIELDS.filter((f) => f.name !== "givenName" && f.name !== "familyName").map((f) => (
          <Field
            key={f.name}
            f={f}
            label={t(`register.${f.name}`)}
            value={f.type === "password" ? undefined : values[f.name]}
            error={errorOf(f.name)}
            hint={f.name === "password" ? t("register.passwordHint", { min: policy.minLength }) : undefined}
            focus={firstError === f.name}
          />
        ))}
        <button type="submit" className="btn btn-primary">
          {t("register.submit")}
        </button>
      </form>
      <p className="auth-alt">
        {t("register.haveAccount")} <a href={loginUrl(LOGIN_PATHS.loginName, flow.id)}>{t("register.signIn")}</a>
      </p>
    </AuthShell>
  );
}

function Field({
  f,
  label,
  value,
  error,
  hint,
  focus,
}: {
  f: (typeof FIELDS)[number];
  label: string;
  value?: string;
  error: string | null;
  hint?: string;
  focus?: boolean;
}) {
  const described = [error ? `${f.name}-error` : null, hint ? `${f.name}-hint` : null].filter(Boolean).join(" ") || undefined;
  return (
    <div className="field">
      <label htmlFor={f.name}>{label}</label>
      <input
        id={f.name}
        name={f.name}
        type={f.type}
        autoComplete={f.autoComplete}
        required
        defaultValue={value}
        autoFocus={focus}
        autoCapitalize={f.name === "username" || f.name === "email" ? "none" : undefined}
        aria-invalid={error ? true : undefined}
        aria-describedby={described}
      />
      {hint && !error ? (
        <span className="hint" id={`${f.name}-hint`}>
          {hint}
        </span>
      ) : null}
      {error ? (
        <span className="error" id={`${f.name}-error`}>
          {error}
        </span>
      ) : null}
    </div>
  );
}
