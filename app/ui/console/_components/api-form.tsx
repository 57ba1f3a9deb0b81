import { getTranslations } from "next-intl/server";
import { createApiResource, updateApiResource } from "@/app/_server/console-actions";
import { ACCESS_TOKEN_FORMATS } from "@torii/core/protocol/vocabulary";
import { LOCALES } from "@torii/core/i18n/locales";
import { ConsoleForm, Field, Hidden, Select } from "./form";
import type { ApiData } from "./api-types";

/** Every field of an API resource (POST/PATCH /apis); scopes and roles one per line. */
export async function ApiForm({ csrf, api, defaultLifetime }: { csrf: string; api?: ApiData; defaultLifetime: number }) {
  const t = await getTranslations("console.apis");
  const tc = await getTranslations("console");
  const edit = !!api;
  return (
    <ConsoleForm action={edit ? updateApiResource : createApiResource} csrf={csrf} submitLabel={edit ? t("save") : t("create")} hideOnSuccess={!edit}>
      {api ? <Hidden name="apiId" value={api.apiId} /> : null}
      <fieldset className="form-section">
        <legend>{t("sectionGeneral")}</legend>
        {edit ? null : <Field name="identifier" label={t("identifier")} required mono hint={t("identifierHint")} placeholder="https://api.example.com" />}
        <Field name="name" label={t("name")} required defaultValue={api?.name} placeholder={t("namePlaceholder")} />
      </fieldset>
      <fieldset className="form-section">
        <legend>{t("sectionScopes")}</legend>
        <Field
          name="scopes"
          label={t("scopes")}
          multiline
          mono
          rows={4}
          hint={t("scopesHint")}
          defaultValue={api?.scopes.map((s) => (s.description ? `${s.name} | ${s.description}` : s.name)).join("\n")}
          placeholder={"orders:read | Read your orders\norders:write | Place orders"}
        />
        {api?.scopes.length ? (
          <div className="scope-texts">
            <p className="hint">{t("scopeTextsHint")}</p>
            {api.scopes.map((scope) => (
              <fieldset key={scope.name} className="field">
                <legend>
                  <code>{scope.name}</code>
                </legend>
                <div className="field-row">
                  {LOCALES.map((locale) => (
                    <Field
                      key={locale}
                      name={`scopeText ${locale} ${scope.name}`}
                      label={tc(`texts.locale.${locale}`)}
                      defaultValue={scope.descriptions?.[locale] ?? ""}
                      placeholder={scope.description}
                    />
                  ))}
                </div>
              </fieldset>
            ))}
          </div>
        ) : null}
        <Field
          name="roles"
          label={t("roles")}
          multiline
          mono
          rows={4}
          hint={t("rolesHint")}
          defaultValue={api?.roles.map((r) => [r.key, r.name, r.description].filter(Boolean).join(" | ")).join("\n")}
          placeholder={"viewer | Viewer\nadmin | Administrator | Everything"}
        />
      </fieldset>
      <fieldset className="form-section">
        <legend>{t("sectionTokens")}</legend>
        <div className="field-row">
          <Select name="accessTokenType" label={t("accessTokenType")} defaultValue={api?.accessTokenType ?? "jwt"} options={ACCESS_TOKEN_FORMATS.map((v) => ({ value: v, label: t(v === "jwt" ? "tokenJwt" : "tokenOpaque") }))} />
          <Field name="accessTokenLifetime" type="number" label={t("accessTokenLifetime")} defaultValue={api?.accessTokenLifetime} placeholder={String(defaultLifetime)} hint={t("seconds")} />
        </div>
        <Field name="jwks" label={t("jwks")} multiline rows={4} mono hint={t("jwksHint")} defaultValue={api?.jwks ? JSON.stringify(api.jwks, null, 2) : ""} placeholder='{"keys": [ ... ]}' />
      </fieldset>
    </ConsoleForm>
  );
}
