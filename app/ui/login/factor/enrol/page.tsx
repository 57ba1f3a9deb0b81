import { getTranslations } from "next-intl/server";
import { torii } from "@torii/core/runtime";
import { totpEnrolment } from "@torii/core/login/second-factor";
import { passkeyRegistration } from "@torii/core/login/passkeys";
import { PasskeyForm } from "@/app/ui/components/passkey-form";
import { LOGIN_PATHS } from "@torii/core/login/paths";
import { Alert, AuthShell, FlowFields } from "@/app/ui/components/auth-shell";
import { loadAccountStep } from "../../flow";
import { FlowExpired } from "../../flow-expired";

export const dynamic = "force-dynamic";

/**
 * The policy's `enrolFactor` step: a second factor is needed and the user has none. The page shows
 * the user's pending authenticator (the same one on every reload until it is confirmed or old)
 * as a QR code drawn on the server and as a key to type; its first code turns it on.
 */
export default async function EnrolFactorPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const gate = await loadAccountStep(searchParams, "enrolFactor");
  if (!gate) return <FlowExpired />;
  const { flow, account } = gate;
  const t = await getTranslations("login");
  const { authRequest: req, settings, client } = flow;
  const inst = await torii();
  const enrolment = await totpEnrolment(inst, { id: account.userId, username: account.username }, settings.branding.productName);
  const error = req.formError === "wrongCode" ? t("enrolFactor.wrongCode") : req.formError === "passkeyFailed" ? t("errors.passkeyFailed") : null;
  // A passkey instead of an app, for browsers that can make one.
  const passkey = await passkeyRegistration(inst, { id: account.userId, username: account.username, givenName: null, familyName: null }, settings.branding.productName);
  return (
    <AuthShell settings={settings} title={t("enrolFactor.title")} subtitle={t("continueTo", { client: client.name })}>
      <p className="muted">{t("enrolFactor.lead", { client: client.name, account: account.username })}</p>
      <p id="enrol-scan">{t("enrolFactor.scan")}</p>
      {/* The SVG is drawn on the server by the qrcode library from our own otpauth URI. */}
      <div className="qr-code" role="img" aria-label={t("enrolFactor.qrLabel")} data-otpauth={enrolment.uri} dangerouslySetInnerHTML={{ __html: enrolment.qrSvg }} />
      <p className="muted">{t("enrolFactor.manual")}</p>
      <p className="secret-key" data-testid="totp-secret">
        {enrolment.secret}
      </p>
      <form method="post" action={LOGIN_PATHS.submitEnrolFactor}>
        <FlowFields id={flow.id} csrf={flow.csrf} />
        <input type="hidden" name="factorId" value={enrolment.factorId} />
        {error ? <Alert id="form-error">{error}</Alert> : null}
        <div className="field">
          <label htmlFor="name">{t("enrolFactor.name")}</label>
          <input id="name" name="name" maxLength={64} placeholder={t("enrolFactor.namePlaceholder")} defaultValue={req.formValues?.name ?? ""} />
        </div>
        <div className="field">
          <label htmlFor="code">{t("enrolFactor.code")}</label>
          <input
            id="code"
            name="code"
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="[0-9 ]{6,7}"
            maxLength={7}
            required
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? "form-error" : undefined}
          />
        </div>
        <button type="submit" className="btn btn-primary">
          {t("enrolFactor.submit")}
        </button>
      </form>
      <PasskeyForm
        action={LOGIN_PATHS.submitEnrolFactor}
        fields={{ authRequest: flow.id, csrf: flow.csrf, factorId: passkey.factorId, name: "" }}
        options={JSON.stringify(passkey.options)}
        mode="register"
        label={t("enrolFactor.passkey")}
        failed={t("errors.passkeyFailed")}
      />
    </AuthShell>
  );
}
