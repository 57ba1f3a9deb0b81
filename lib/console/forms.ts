import type { ManagementOperations, OperationId } from "@/lib/management/api-routes";

/**
 * Console forms carry the management API's field names (dotted for nested fields, as in the API's
 * error paths: `lifetimes.accessToken`), so that the API's field errors land on the right input.
 * These functions turn a submitted form into the API's JSON body; they convert shapes only and
 * leave every rule to the API's schemas (one validation, one set of messages).
 */

import { LOCALES } from "@/lib/i18n/locales";

export type FormValues = Record<string, string | string[]>;

/** The submitted values (for showing them again after an error), without the bookkeeping fields. */
export function formValues(form: FormData): FormValues {
  const out: FormValues = {};
  for (const [key, value] of form.entries()) {
    if (typeof value !== "string" || key.startsWith("$") || key === "csrf") continue;
    const prev = out[key];
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/** A text field's value; "" when it is missing or is a file. */
export function formText(form: FormData, name: string): string {
  const v = form.get(name);
  return typeof v === "string" ? v : "";
}

/** One entry per non-empty line. */
export function lines(value: string): string[] {
  return value
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
}

/** A whole number as a number; anything else is passed on as text for the API to refuse with its message. */
function numberOrText(value: string): number | string {
  const v = value.trim();
  return /^-?\d+$/.test(v) ? Number(v) : v;
}

/** Empty text is null (a cleared optional field). */
const nullable = (v: string) => (v.trim() === "" ? null : v.trim());

/**
 * A value as a form gives it: the schema's own type, except that where the schema wants a number,
 * a boolean or one of several words, the administrator's text may stand instead. The management
 * API validates it and answers field errors, which the form shows next to the inputs (one
 * validation, one set of messages). Keys and nesting are the schema's: a field renamed or removed
 * in the API's schema breaks the console at compile time.
 */
export type AsTyped<T> = T extends string | number
  ? T | string
  : T extends boolean | null | undefined
    ? T
    : T extends readonly (infer E)[]
      ? AsTyped<E>[]
      : T extends object
        ? { [K in keyof T]: AsTyped<T[K]> }
        : T;

/** The body of a management API operation as a console form builds it (see AsTyped). */
export type FormBody<O extends OperationId> = AsTyped<NonNullable<ManagementOperations[O]["body"]>>;

export type Parsed<B> = { body: B; fields: FieldProblem[] };

/** The text of a JSON field parsed, for the API's schema to check (null when empty, undefined when no JSON). */
function json(form: FormData, name: string, fields: FieldProblem[]): unknown {
  const v = formText(form, name).trim();
  if (!v) return null;
  try {
    return JSON.parse(v);
  } catch {
    fields.push({ path: name, code: "invalid_json", message: "Must be valid JSON." });
    return undefined;
  }
}

/** A number field: absent when left empty (the defaults apply), else its number or its text. */
function optionalNumber(form: FormData, name: string): number | string | undefined {
  const v = formText(form, name);
  return v.trim() === "" ? undefined : numberOrText(v);
}

/** Drops the keys whose value is undefined (a field the form leaves to the API's default). */
function defined<T extends object>(body: T): T {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as T;
}

type ClientForm = FormBody<"createClient"> & FormBody<"updateClient">;

/** The application form: every registration field of POST/PATCH /clients. */
export function clientBody(form: FormData, mode: "create" | "update"): Parsed<ClientForm> {
  const fields: FieldProblem[] = [];
  const jwks = json(form, "jwks", fields);
  // The web origins (CORS): "default" follows the redirect URIs (null), "none" allows no page
  // ([]), "list" exactly the origins listed. Without the choice (an older form), an empty list
  // means the default.
  const origins = lines(formText(form, "allowedOrigins"));
  const originsMode = formText(form, "originsMode");
  const body: ClientForm = {
    name: formText(form, "name"),
    redirectUris: lines(formText(form, "redirectUris")),
    postLogoutRedirectUris: lines(formText(form, "postLogoutRedirectUris")),
    allowedOrigins: originsMode === "none" ? [] : originsMode === "list" ? origins : originsMode === "default" ? null : origins.length ? origins : null,
    firstParty: form.get("firstParty") === "on",
    responseTypes: form.getAll("responseTypes").map(String),
    grantTypes: form.getAll("grantTypes").map(String),
    authMethod: formText(form, "authMethod"),
    // A key set as the administrator wrote it; the API's schema checks it (and names the field).
    jwks: jwks !== undefined && (jwks !== null || mode === "update") ? (jwks as ClientForm["jwks"]) : undefined,
    accessTokenType: formText(form, "accessTokenType"),
    idTokenUserinfoAssertion: form.get("idTokenUserinfoAssertion") === "on",
    // The APIs the application may ask tokens for: a box per API, and one per scope of it. An API
    // is allowed when its box or any of its scopes is ticked.
    apiScopes: form.has("apiScopesForm") ? byApiChecks(form, "apiScopes", []) : undefined,
    // Left empty on create: the instance defaults apply.
    accessTokenLifetime: optionalNumber(form, "accessTokenLifetime"),
    idTokenLifetime: optionalNumber(form, "idTokenLifetime"),
    refreshTokenLifetime: optionalNumber(form, "refreshTokenLifetime"),
  };
  return { body: defined(body), fields };
}

const ADDRESS = ["streetAddress", "locality", "region", "postalCode", "country"] as const;

/** The user forms: profile fields of a human or machine user (POST /users, PATCH /users/{id}). */
export function userBody(form: FormData, type: "human" | "machine", mode: "create"): Parsed<FormBody<"createUser">>;
export function userBody(form: FormData, type: "human" | "machine", mode: "update"): Parsed<FormBody<"updateUser">>;
export function userBody(form: FormData, type: "human" | "machine", mode: "create" | "update"): Parsed<FormBody<"createUser"> | FormBody<"updateUser">> {
  const text = (name: string) => nullable(formText(form, name));
  const username = formText(form, "username").trim();
  const roles = mode === "create" ? form.getAll("roles").map(String) : undefined;
  if (type === "machine") {
    const name = formText(form, "name").trim() || (mode === "create" ? undefined : "");
    const machine = { username, name, description: text("description"), roles };
    const body: FormBody<"createUser"> | FormBody<"updateUser"> = mode === "create" ? { type: "machine", ...machine } : machine;
    return { body: defined(body), fields: [] };
  }
  const address = Object.fromEntries(ADDRESS.map((k) => [k, text(`address.${k}`)])) as Record<(typeof ADDRESS)[number], string | null>;
  const password = mode === "create" ? formText(form, "password") || undefined : undefined;
  const human = {
    username,
    email: text("email"),
    givenName: text("givenName"),
    familyName: text("familyName"),
    nickname: text("nickname"),
    locale: text("locale"),
    phone: text("phone"),
    emailVerified: form.get("emailVerified") === "on",
    phoneVerified: form.get("phoneVerified") === "on",
    address: Object.values(address).some((v) => v !== null) ? address : null,
    roles,
  };
  const body: FormBody<"createUser"> | FormBody<"updateUser"> = mode === "create" ? { type: "human", ...human, password } : human;
  return { body: defined(body), fields: [] };
}

type SettingsForm = FormBody<"updateSettings">;
/** The settings groups whose fields the form names `group.field`. */
export type SettingsGroup = { [K in keyof SettingsForm]-?: NonNullable<SettingsForm[K]> extends Record<string, unknown> ? K : never }[keyof SettingsForm];

/** The settings form: nested objects by dotted names (`lockoutPolicy.maxFailures`). */
export function nestedNumbers(form: FormData, groups: readonly SettingsGroup[]): Parsed<SettingsForm> {
  const body: Record<string, Record<string, unknown>> = {};
  for (const [key, value] of form.entries()) {
    if (typeof value !== "string") continue;
    const dot = key.indexOf(".");
    if (dot < 0) continue;
    const group = key.slice(0, dot);
    if (!(groups as readonly string[]).includes(group)) continue;
    const target = (body[group] ??= {});
    const field = key.slice(dot + 1);
    // Check boxes come as a hidden "false" followed by the box's "true" when ticked: the last one wins.
    target[field] = value === "true" ? true : value === "false" ? false : numberOrText(value);
  }
  // The fields inside a group are the form's inputs, named after the schema's (the API refuses
  // any other with a field error): only the groups are known here.
  return { body, fields: [] };
}

/** A field error as the management API reports it (lib/management/http.ts FieldError). */
export type FieldProblem = { path: string; code?: string; message: string; params?: Record<string, string | number> };

/** Translates within the `console` namespace; `has` tells whether a text exists. */
export type ConsoleT = { (key: string, values?: Record<string, string | number>): string; has(key: string): boolean };

/**
 * API field errors keyed by the form's input names (`redirectUris.2` is shown at `redirectUris`),
 * in the console's language: the text of the error's code (console.apiErrors), else the API's
 * English message.
 */
export function fieldErrors(fields: FieldProblem[], inputs: readonly string[], t: ConsoleT): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fields) {
    const input = inputs.find((n) => f.path === n) ?? inputs.find((n) => f.path.startsWith(n + ".")) ?? "";
    const rest = f.path !== input && input ? f.path.slice(input.length + 1) : "";
    const key = `apiErrors.${f.code}`;
    let text = f.code && t.has(key) ? t(key, f.params ?? {}) : f.message;
    // A list input's item (`redirectUris.2`, or a field of it, `scopes.0.name`): its line.
    const item = /^(\d+)(?:\.|$)/.exec(rest);
    if (item) text += ` ${t("apiErrors.line", { line: Number(item[1]) + 1 })}`;
    out[input] = out[input] ? `${out[input]} ${text}` : text;
  }
  return out;
}

/** `a | b | c` → trimmed parts; the console's one-line notation for scopes and roles. */
function pipeParts(line: string): string[] {
  return line.split("|").map((p) => p.trim());
}

/**
 * The API form (POST/PATCH /apis): scopes one per line as `name | description`, roles as
 * `key | name | description`. Per-locale scope descriptions are the API's (PATCH keeps those the
 * form does not show: `current` is the API as it is).
 */
export function apiBody(form: FormData, mode: "create", current?: undefined): Parsed<FormBody<"createApi">>;
export function apiBody(form: FormData, mode: "update", current: { scopes: { name: string; descriptions?: Record<string, string | undefined> }[] }): Parsed<FormBody<"updateApi">>;
export function apiBody(
  form: FormData,
  mode: "create" | "update",
  current?: { scopes: { name: string; descriptions?: Record<string, string | undefined> }[] },
): Parsed<FormBody<"createApi"> | FormBody<"updateApi">> {
  const fields: FieldProblem[] = [];
  const jwks = json(form, "jwks", fields);
  const common = {
    name: formText(form, "name"),
    scopes: lines(formText(form, "scopes")).map((line) => {
      const [name = "", ...rest] = pipeParts(line);
      const descriptions = scopeTexts(form, name) ?? current?.scopes.find((s) => s.name === name)?.descriptions;
      return { name, description: rest.join(" | "), ...(descriptions && Object.keys(descriptions).length ? { descriptions } : {}) };
    }),
    roles: lines(formText(form, "roles")).map((line) => {
      const [key = "", name = "", ...rest] = pipeParts(line);
      return { key, name: name || key, description: rest.join(" | ") };
    }),
    accessTokenType: formText(form, "accessTokenType"),
    accessTokenLifetime: optionalNumber(form, "accessTokenLifetime"),
    jwks: jwks !== undefined && (jwks !== null || mode === "update") ? (jwks as FormBody<"updateApi">["jwks"]) : undefined,
  };
  const body: FormBody<"createApi"> | FormBody<"updateApi"> = mode === "create" ? { identifier: formText(form, "identifier").trim(), ...common } : common;
  return { body: defined(body), fields };
}

/**
 * A scope's text per locale from the API page's fields `scopeText <locale> <scope>` (a scope
 * name has no spaces); the empty ones are left out (the default description applies). Undefined
 * when the form had no such fields for the scope (one just added): its texts stay as they are.
 */
function scopeTexts(form: FormData, scope: string): Record<string, string> | undefined {
  if (!LOCALES.some((l) => form.has(`scopeText ${l} ${scope}`))) return undefined;
  const out: Record<string, string> = {};
  for (const l of LOCALES) {
    const v = formText(form, `scopeText ${l} ${scope}`).trim();
    if (v) out[l] = v;
  }
  return out;
}

/**
 * Check boxes named `name` whose values are `apiIdentifier` or `apiIdentifier key` (identifiers
 * and keys have no spaces) → `{[apiIdentifier]: keys[]}`; `all` lists the APIs the form showed,
 * so that an API with every box cleared is sent as `[]` (take everything away there).
 */
export function byApiChecks(form: FormData, name: string, all: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = Object.fromEntries(all.map((a) => [a, []]));
  for (const v of form.getAll(name).map(String)) {
    const [api = "", key] = v.split(" ");
    if (!api) continue;
    out[api] ??= [];
    if (key) out[api].push(key);
  }
  return out;
}
