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

declare const formBody: unique symbol;

/**
 * A request body built from a form's fields as the administrator typed them: the management API
 * validates it and answers field errors, which the form shows next to the inputs. So it is sent
 * as it is, not typed as the operation's body (app/_server/console-next.ts, `call`).
 */
export type FormBody = Record<string, unknown> & { readonly [formBody]: true };

export type Parsed = { body: FormBody; fields: FieldProblem[] };

/** A body the console assembled from form fields (see FormBody). */
export const asFormBody = (body: Record<string, unknown>): FormBody => body as FormBody;

const emptyBody = () => asFormBody({});

function json(form: FormData, name: string, parsed: Parsed): unknown {
  const v = formText(form, name).trim();
  if (!v) return null;
  try {
    return JSON.parse(v);
  } catch {
    parsed.fields.push({ path: name, code: "invalid_json", message: "Must be valid JSON." });
    return undefined;
  }
}

/** The application form: every registration field of POST/PATCH /clients. */
export function clientBody(form: FormData, mode: "create" | "update"): Parsed {
  const parsed: Parsed = { body: emptyBody(), fields: [] };
  const b = parsed.body;
  b.name = formText(form, "name");
  b.redirectUris = lines(formText(form, "redirectUris"));
  b.postLogoutRedirectUris = lines(formText(form, "postLogoutRedirectUris"));
  // The web origins (CORS): "default" follows the redirect URIs (null), "none" allows no page
  // ([]), "list" exactly the origins listed. Without the choice (an older form), an empty list
  // means the default.
  const origins = lines(formText(form, "allowedOrigins"));
  const originsMode = formText(form, "originsMode");
  b.allowedOrigins = originsMode === "none" ? [] : originsMode === "list" ? origins : originsMode === "default" ? null : origins.length ? origins : null;
  b.firstParty = form.get("firstParty") === "on";
  b.responseTypes = form.getAll("responseTypes").map(String);
  b.grantTypes = form.getAll("grantTypes").map(String);
  b.authMethod = formText(form, "authMethod");
  const jwks = json(form, "jwks", parsed);
  if (jwks !== undefined && (jwks !== null || mode === "update")) b.jwks = jwks;
  b.accessTokenType = formText(form, "accessTokenType");
  b.idTokenUserinfoAssertion = form.get("idTokenUserinfoAssertion") === "on";
  // The APIs the application may ask tokens for: a box per API, and one per scope of it. An API
  // is allowed when its box or any of its scopes is ticked.
  if (form.has("apiScopesForm")) {
    const chosen = byApiChecks(form, "apiScopes", []);
    b.apiScopes = chosen;
  }
  for (const name of ["accessTokenLifetime", "idTokenLifetime", "refreshTokenLifetime"]) {
    const v = formText(form, name);
    // Left empty on create: the instance defaults apply.
    if (v.trim() !== "") b[name] = numberOrText(v);
  }
  return parsed;
}

const HUMAN_TEXT = ["email", "givenName", "familyName", "nickname", "locale", "phone"] as const;
const ADDRESS = ["streetAddress", "locality", "region", "postalCode", "country"] as const;

/** The user forms: profile fields of a human or machine user (POST /users, PATCH /users/{id}). */
export function userBody(form: FormData, type: "human" | "machine", mode: "create" | "update"): Parsed {
  const parsed: Parsed = { body: emptyBody(), fields: [] };
  const b = parsed.body;
  if (mode === "create") b.type = type;
  b.username = formText(form, "username").trim();
  if (type === "machine") {
    b.name = formText(form, "name").trim() || (mode === "create" ? undefined : "");
    if (b.name === undefined) delete b.name;
    b.description = nullable(formText(form, "description"));
  } else {
    for (const name of HUMAN_TEXT) b[name] = nullable(formText(form, name));
    b.emailVerified = form.get("emailVerified") === "on";
    b.phoneVerified = form.get("phoneVerified") === "on";
    const address = Object.fromEntries(ADDRESS.map((k) => [k, nullable(formText(form, `address.${k}`))]));
    b.address = Object.values(address).some((v) => v !== null) ? address : null;
    if (mode === "create") {
      const pw = formText(form, "password");
      if (pw) b.password = pw;
    }
  }
  if (mode === "create") {
    b.roles = form.getAll("roles").map(String);
  }
  return parsed;
}

/** The settings form: nested objects by dotted names (`lockoutPolicy.maxFailures`). */
export function nestedNumbers(form: FormData, groups: readonly string[]): Parsed {
  const parsed: Parsed = { body: emptyBody(), fields: [] };
  for (const [key, value] of form.entries()) {
    if (typeof value !== "string") continue;
    const dot = key.indexOf(".");
    if (dot < 0) continue;
    const group = key.slice(0, dot);
    if (!groups.includes(group)) continue;
    const target = ((parsed.body[group] as Record<string, unknown> | undefined) ??= {});
    const field = key.slice(dot + 1);
    // Check boxes come as a hidden "false" followed by the box's "true" when ticked: the last one wins.
    target[field] = value === "true" ? true : value === "false" ? false : numberOrText(value);
  }
  return parsed;
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
    if (/^\d+$/.test(rest)) text += ` ${t("apiErrors.line", { line: Number(rest) + 1 })}`;
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
export function apiBody(form: FormData, mode: "create" | "update", current?: { scopes: { name: string; descriptions?: Record<string, string | undefined> }[] }): Parsed {
  const parsed: Parsed = { body: emptyBody(), fields: [] };
  const b = parsed.body;
  if (mode === "create") b.identifier = formText(form, "identifier").trim();
  b.name = formText(form, "name");
  b.scopes = lines(formText(form, "scopes")).map((line) => {
    const [name = "", ...rest] = pipeParts(line);
    const descriptions = scopeTexts(form, name) ?? current?.scopes.find((s) => s.name === name)?.descriptions;
    return { name, description: rest.join(" | "), ...(descriptions && Object.keys(descriptions).length ? { descriptions } : {}) };
  });
  b.roles = lines(formText(form, "roles")).map((line) => {
    const [key = "", name = "", ...rest] = pipeParts(line);
    return { key, name: name || key, description: rest.join(" | ") };
  });
  b.accessTokenType = formText(form, "accessTokenType");
  const lifetime = formText(form, "accessTokenLifetime");
  if (lifetime.trim() !== "") b.accessTokenLifetime = numberOrText(lifetime);
  const jwks = json(form, "jwks", parsed);
  if (jwks !== undefined && (jwks !== null || mode === "update")) b.jwks = jwks;
  return parsed;
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
