import { getTranslations } from "next-intl/server";
import { createApplication, updateApplication } from "@/app/_server/console-actions";
import { redirectUriOrigins } from "@torii/core/oauth/cors";
import { ACCESS_TOKEN_FORMATS, CLIENT_AUTH_METHODS as AUTH_METHODS, GRANT_TYPES, RESPONSE_TYPES } from "@torii/core/protocol/vocabulary";
import { Checkbox, Checks, ConsoleForm, Field, Hidden, Radios, Select } from "./form";


export type { ClientData } from "./api-types";
import type { ApiData, ClientData } from "./api-types";

/** Every registration field of the management API, by its API name. */
export async function ApplicationForm({
  csrf,
  client,
  defaults,
  apis,
}: {
  csrf: string;
  client?: ClientData;
  defaults: { accessToken: number; idToken: number; refreshToken: number };
  apis: ApiData[];
}) {
  const t = await getTranslations("console.applications");
  const edit = !!client;
  return (
    <ConsoleForm action={edit ? updateApplication : createApplication} csrf={csrf} submitLabel={edit ? t("save") : t("create")} hideOnSuccess={!edit}>
      {client ? <Hidden name="clientId" value={client.clientId} /> : null}
      <fieldset className="form-section">
        <legend>{t("sectionGeneral")}</legend>
        <Field name="name" label={t("name")} required defaultValue={client?.name} placeholder={t("namePlaceholder")} />
        <Checkbox name="firstParty" label={t("firstParty")} hint={t("firstPartyHint")} defaultChecked={client ? client.firstParty : true} />
        <Field name="redirectUris" label={t("redirectUris")} multiline mono hint={t("redirectUrisHint")} defaultValue={client?.redirectUris.join("\n")} placeholder="https://app.example.com/callback" />
        <Field name="postLogoutRedirectUris" label={t("postLogoutRedirectUris")} multiline mono hint={t("oneperline")} defaultValue={client?.postLogoutRedirectUris.join("\n")} />
        <Radios
          name="originsMode"
          legend={t("allowedOrigins")}
          defaultValue={!client || client.allowedOrigins === null ? "default" : client.allowedOrigins.length ? "list" : "none"}
          options={[
            { value: "default", label: t("originsDefault", { origins: client ? redirectUriOrigins(client.redirectUris).join(", ") || t("originsNone") : t("originsNone") }) },
            { value: "none", label: t("originsNoneChoice") },
            { value: "list", label: t("originsList") },
          ]}
        />
        <Field
          name="allowedOrigins"
          label={t("allowedOriginsList")}
          multiline
          mono
          rows={2}
          hint={t("allowedOriginsHint")}
          defaultValue={client?.allowedOrigins?.join("\n") ?? ""}
          placeholder="https://app.example.com"
        />
      </fieldset>
      <fieldset className="form-section">
        <legend>{t("sectionFlows")}</legend>
        <div className="field-row">
          <Checks name="responseTypes" legend={t("responseTypes")} options={RESPONSE_TYPES.map((v) => ({ value: v, label: v }))} defaultValues={client?.responseTypes ?? ["code"]} />
          <Checks name="grantTypes" legend={t("grantTypes")} options={GRANT_TYPES.map((v) => ({ value: v, label: t(`grant.${v.replace(/[^a-z_]/g, "_")}` as never) }))} defaultValues={client?.grantTypes ?? ["authorization_code"]} />
        </div>
        <Select name="authMethod" label={t("authMethod")} defaultValue={client?.authMethod ?? "client_secret_basic"} options={AUTH_METHODS.map((v) => ({ value: v, label: t(`auth.${v}`) }))} hint={t("authMethodHint")} />
        <Field name="jwks" label={t("jwks")} multiline rows={5} mono hint={t("jwksHint")} defaultValue={client?.jwks ? JSON.stringify(client.jwks, null, 2) : ""} placeholder='{"keys": [ ... ]}' />
      </fieldset>
      {apis.length ? (
        <fieldset className="form-section">
          <legend>{t("sectionApis")}</legend>
          <Hidden name="apiScopesForm" value="1" />
          <p className="hint">{t("apisHint")}</p>
          <div className="field-row">
            {apis.map((api) => (
              <Checks
                key={api.identifier}
                name="apiScopes"
                legend={api.name}
                options={[
                  { value: api.identifier, label: t("apiAccess"), hint: api.identifier },
                  ...api.scopes.map((s) => ({ value: `${api.identifier} ${s.name}`, label: s.name, hint: s.description || undefined })),
                ]}
                defaultValues={
                  client && api.identifier in client.apiScopes ? [api.identifier, ...(client.apiScopes[api.identifier] ?? []).map((s) => `${api.identifier} ${s}`)] : []
                }
              />
            ))}
          </div>
        </fieldset>
      ) : null}
      <fieldset className="form-section">
        <legend>{t("sectionTokens")}</legend>
        <Select name="accessTokenType" label={t("accessTokenType")} defaultValue={client?.accessTokenType ?? "jwt"} options={ACCESS_TOKEN_FORMATS.map((v) => ({ value: v, label: t(v === "jwt" ? "tokenJwt" : "tokenOpaque") }))} />
        <Checkbox name="idTokenUserinfoAssertion" label={t("idTokenUserinfoAssertion")} hint={t("idTokenUserinfoAssertionHint")} defaultChecked={client?.idTokenUserinfoAssertion} />
        <div className="field-row three">
          <Field name="accessTokenLifetime" type="number" label={t("accessTokenLifetime")} defaultValue={client?.accessTokenLifetime} placeholder={String(defaults.accessToken)} hint={t("seconds")} />
          <Field name="idTokenLifetime" type="number" label={t("idTokenLifetime")} defaultValue={client?.idTokenLifetime} placeholder={String(defaults.idToken)} hint={t("seconds")} />
          <Field name="refreshTokenLifetime" type="number" label={t("refreshTokenLifetime")} defaultValue={client?.refreshTokenLifetime} placeholder={String(defaults.refreshToken)} hint={t("seconds")} />
        </div>
      </fieldset>
    </ConsoleForm>
  );
}
