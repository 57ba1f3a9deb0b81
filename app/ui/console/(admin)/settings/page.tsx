import { hasMessage } from "@torii/core/i18n/messages";
import { getTranslations } from "next-intl/server";
import { saveSettings } from "@/app/_server/console-actions";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { LOCALES } from "@torii/core/i18n/locales";
import { ConsoleForm, Field, Hidden, Select } from "../../_components/form";
import { PageHeader } from "../../_components/ui";
import { SmtpSection } from "../../_components/smtp-section";

export const dynamic = "force-dynamic";


const LIFETIMES = ["accessToken", "idToken", "refreshToken", "authCode", "sessionIdle", "sessionAbsolute"] as const;
const LOCKOUT = ["freeFailures", "addressFreeFailures", "maxDelaySeconds", "windowSeconds", "lockAfterFailures", "lockSeconds"] as const;
const LOCKOUT_HINTS: Partial<Record<(typeof LOCKOUT)[number], "seconds" | "lockAfterFailuresHint">> = {
  maxDelaySeconds: "seconds",
  windowSeconds: "seconds",
  lockAfterFailures: "lockAfterFailuresHint",
  lockSeconds: "seconds",
};
const POLICY_FLAGS = ["requireUppercase", "requireLowercase", "requireNumber", "requireSymbol"] as const;

export default async function SettingsPage() {
  const admin = await requireAdmin(`${CONSOLE_PATH}/settings`);
  const t = await getTranslations("console.settings");
  const tl = await getTranslations("console.texts.locale");
  const s = (await read(admin.user, "getSettings"))!;
  return (
    <>
      <PageHeader title={t("title")} lead={t("lead")} />
      <div className="panel panel-pad">
        <ConsoleForm action={saveSettings} csrf={admin.csrf} submitLabel={t("save")}>
          <fieldset className="form-section">
            <legend>{t("general")}</legend>
            <div className="field-row">
              <Field name="primaryDomain" label={t("primaryDomain")} hint={t("primaryDomainHint")} defaultValue={s.primaryDomain} mono />
              <Select name="defaultLocale" label={t("defaultLocale")} defaultValue={s.defaultLocale} options={LOCALES.map((l) => ({ value: l, label: tl(l) }))} />
            </div>
          </fieldset>
          <fieldset className="form-section">
            <legend>{t("lifetimes")}</legend>
            <p className="hint">{t("lifetimesHint")}</p>
            <div className="field-row three">
              {LIFETIMES.map((k) => (
                <Field key={k} name={`lifetimes.${k}`} type="number" label={t(`lifetime.${k}`)} defaultValue={s.lifetimes[k]} hint={t("seconds")} />
              ))}
            </div>
          </fieldset>
          <fieldset className="form-section">
            <legend>{t("refreshReuse")}</legend>
            <p className="hint">{t("refreshReuseHint")}</p>
            <div className="field-row three">
              <Field
                name="refreshTokenReuseIntervalSeconds"
                type="number"
                label={t("refreshReuseInterval")}
                defaultValue={s.refreshTokenReuseIntervalSeconds}
                hint={t("refreshReuseIntervalHint")}
              />
            </div>
          </fieldset>
          <fieldset className="form-section">
            <legend>{t("lockout")}</legend>
            <p className="hint">{t("lockoutHint")}</p>
            <div className="field-row three">
              {LOCKOUT.map((k) => (
                <Field
                  key={k}
                  name={`lockoutPolicy.${k}`}
                  type="number"
                  label={t(k)}
                  defaultValue={s.lockoutPolicy[k]}
                  hint={LOCKOUT_HINTS[k] ? t(LOCKOUT_HINTS[k]) : undefined}
                />
              ))}
            </div>
          </fieldset>
          <fieldset className="form-section">
            <legend>{t("accounts")}</legend>
            <label className="check">
              <Hidden name="registration.enabled" value="false" />
              <input type="checkbox" name="registration.enabled" value="true" defaultChecked={s.registration.enabled} />
              <span>
                {t("registrationEnabled")}
                <span className="hint block">{t("registrationEnabledHint")}</span>
              </span>
            </label>
            <div className="field-row three">
              <Select
                name="registration.names"
                label={t("registrationNames")}
                defaultValue={s.registration.names}
                options={(["required", "optional", "hidden"] as const).map((v) => ({ value: v, label: t(`registrationNamesOption.${v}`) }))}
              />
              <Select
                name="emailVerification"
                label={t("emailVerification")}
                hint={t("emailVerificationHint")}
                defaultValue={s.emailVerification}
                options={(["off", "optional", "required"] as const).map((v) => ({ value: v, label: t(`emailVerificationOption.${v}`) }))}
              />
              <Field name="passwordReset.linkLifetimeSeconds" type="number" label={t("resetLinkLifetime")} defaultValue={s.passwordReset.linkLifetimeSeconds} hint={t("seconds")} />
            </div>
            <div className="field-row three">
              <Select
                name="mfa"
                label={t("mfa")}
                hint={t("mfaHint")}
                defaultValue={s.mfa}
                options={(["off", "optional", "required"] as const).map((v) => ({ value: v, label: t(`mfaOption.${v}`) }))}
              />
            </div>
          </fieldset>
          <fieldset className="form-section">
            <legend>{t("passwordPolicy")}</legend>
            <div className="field-row three">
              <Field name="passwordPolicy.minLength" type="number" label={t("minLength")} defaultValue={s.passwordPolicy.minLength} />
              <Field name="passwordPolicy.maxAgeDays" type="number" label={t("maxAgeDays")} defaultValue={s.passwordPolicy.maxAgeDays} hint={t("maxAgeDaysHint")} />
            </div>
            <div className="checks-row">
              {POLICY_FLAGS.map((k) => (
                <label key={k} className="check">
                  <Hidden name={`passwordPolicy.${k}`} value="false" />
                  <input type="checkbox" name={`passwordPolicy.${k}`} value="true" defaultChecked={s.passwordPolicy[k]} />
                  <span>{t(`policy.${k}`)}</span>
                </label>
              ))}
            </div>
          </fieldset>
          <fieldset className="form-section">
            <legend>{t("rateLimits")}</legend>
            <div className="field-row three">
              {Object.entries(s.rateLimits).map(([k, v]) => (
                <Field key={k} name={`rateLimits.${k}`} type="number" label={hasMessage(t, `rate.${k}`) ? t(`rate.${k}` as never) : k} defaultValue={v} hint={k.endsWith("PerHour") ? t("perHour") : t("perMinute")} />
              ))}
            </div>
          </fieldset>
          <fieldset className="form-section">
            <legend>{t("retention")}</legend>
            <Field name="retention.auditDays" type="number" label={t("auditDays")} defaultValue={s.retention.auditDays} hint={t("days")} />
          </fieldset>
        </ConsoleForm>
      </div>
      <SmtpSection csrf={admin.csrf} smtp={(await read(admin.user, "getSmtpSettings"))!} />
    </>
  );
}
