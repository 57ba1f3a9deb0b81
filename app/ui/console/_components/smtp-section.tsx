import { getTranslations } from "next-intl/server";
import { removeSmtp, saveSmtp, sendTestMail } from "@/app/_server/console-actions";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { Checkbox, ConsoleForm, Field, Select } from "./form";
import { Section } from "./ui";
import type { ApiResponse } from "./api-types";

/** The mail server: where mails go (or that they stay in the outbox), with a test mail. */
export async function SmtpSection({ csrf, smtp }: { csrf: string; smtp: ApiResponse<"getSmtpSettings"> }) {
  const t = await getTranslations("console.mail");
  const status = smtp.source === "environment" ? t("fromEnvironment") : smtp.configured ? t("configured") : t("notConfigured");
  return (
    <Section title={t("title")} description={t("lead")} id="smtp">
      <p className="hint" data-testid="smtp-status">
        {status} <a href={`${CONSOLE_PATH}/outbox`}>{t("openOutbox")}</a>
      </p>
      <ConsoleForm action={saveSmtp} csrf={csrf} submitLabel={t("save")}>
        <div className="field-row three">
          <Field name="host" label={t("host")} defaultValue={smtp.host} mono placeholder="smtp.example.com" />
          <Field name="port" type="number" label={t("port")} defaultValue={smtp.port ?? 587} />
          <Select
            name="security"
            label={t("security")}
            defaultValue={smtp.security ?? "starttls"}
            options={(["starttls", "tls", "none"] as const).map((v) => ({ value: v, label: t(`securityOption.${v}`) }))}
          />
        </div>
        <div className="field-row">
          <Field name="user" label={t("user")} defaultValue={smtp.user} autoComplete="off" />
          <Field name="password" type="password" label={t("password")} hint={smtp.hasPassword ? t("passwordKept") : undefined} autoComplete="new-password" />
        </div>
        {smtp.hasPassword ? <Checkbox name="clearPassword" label={t("clearPassword")} /> : null}
        <div className="field-row">
          <Field name="fromAddress" type="email" label={t("fromAddress")} defaultValue={smtp.fromAddress} placeholder="no-reply@example.com" />
          <Field name="fromName" label={t("fromName")} defaultValue={smtp.fromName} />
        </div>
      </ConsoleForm>
      {smtp.configured ? (
        <>
          <hr className="divider" />
          <ConsoleForm action={sendTestMail} csrf={csrf} submitLabel={t("sendTest")}>
            <Field name="to" type="email" label={t("testTo")} />
          </ConsoleForm>
        </>
      ) : null}
      {smtp.source === "settings" ? (
        <>
          <hr className="divider" />
          <ConsoleForm action={removeSmtp} csrf={csrf} submitLabel={t("remove")} inline danger />
        </>
      ) : null}
    </Section>
  );
}
