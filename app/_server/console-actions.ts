"use server";

import { getTranslations } from "next-intl/server";
import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { clientBody, fieldErrors, formText, formValues, nestedNumbers, userBody, type Parsed } from "@torii/core/console/forms";
import { actionAdmin, api, ConsoleForbidden, type Admin, type ApiResult } from "@/app/_server/console-next";
import type { ActionState } from "@torii/core/console/state";

/**
 * Console mutations. Each one: a live console session of an administrator plus the form's CSRF
 * token (actionAdmin), then exactly one management API call through the API's route table, whose
 * validation messages come back as field errors by input name.
 */

type Handler = (admin: Admin, form: FormData, t: Awaited<ReturnType<typeof getTranslations>>) => Promise<Omit<ActionState, "seq">>;

function guarded(handler: Handler) {
  // `prev` arrives from the browser with the post: a crafted request may leave it out.
  return async (prev: ActionState | null | undefined, form: FormData): Promise<ActionState> => {
    const t = await getTranslations("console");
    const seq = (prev?.seq ?? 0) + 1;
    try {
      const admin = await actionAdmin(form);
      const out = await handler(admin, form, t);
      if (out.ok) revalidatePath(CONSOLE_PATH, "layout");
      return { seq, values: formValues(form), ...out, fields: out.fields ?? {} };
    } catch (err) {
      if (err instanceof ConsoleForbidden) return { seq, ok: false, message: t("common.forbidden") };
      throw err;
    }
  };
}

function failure(r: Extract<ApiResult, { ok: false }>, inputs: readonly string[], t: Awaited<ReturnType<typeof getTranslations>>) {
  const fields = fieldErrors(r.fields, inputs, t);
  const general = fields[""];
  delete fields[""];
  return {
    ok: false,
    message: Object.keys(fields).length ? t("common.fixFields") + (general ? ` ${general}` : "") : general || r.message,
    fields,
  };
}

function parseFailure(p: Parsed, inputs: readonly string[], t: Awaited<ReturnType<typeof getTranslations>>) {
  return { ok: false, message: t("common.fixFields"), fields: fieldErrors(p.fields, inputs, t) };
}

const id = (form: FormData, name: string) => encodeURIComponent(formText(form, name));

// ---------- applications ----------

const CLIENT_INPUTS = [
  "name",
  "redirectUris",
  "postLogoutRedirectUris",
  "responseTypes",
  "grantTypes",
  "authMethod",
  "jwks",
  "accessTokenType",
  "idTokenUserinfoAssertion",
  "accessTokenLifetime",
  "idTokenLifetime",
  "refreshTokenLifetime",
] as const;

export async function createApplication(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const parsed = clientBody(f, "create");
    if (parsed.fields.length) return parseFailure(parsed, CLIENT_INPUTS, t);
    const r = await api<{ clientId: string; clientSecret?: string; name: string }>(admin.user, "POST", "/clients", parsed.body);
    if (!r.ok) return failure(r, CLIENT_INPUTS, t);
    return {
      ok: true,
      message: t("applications.createdMsg", { name: r.data.name }),
      secret: r.data.clientSecret ? { label: t("applications.secretLabel"), value: r.data.clientSecret } : undefined,
      next: { href: `${CONSOLE_PATH}/applications/${encodeURIComponent(r.data.clientId)}`, label: t("applications.open") },
    };
  })(prev, form);
}

export async function updateApplication(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const parsed = clientBody(f, "update");
    if (parsed.fields.length) return parseFailure(parsed, CLIENT_INPUTS, t);
    const r = await api<{ clientSecret?: string }>(admin.user, "PATCH", `/clients/${id(f, "clientId")}`, parsed.body);
    if (!r.ok) return failure(r, CLIENT_INPUTS, t);
    return {
      ok: true,
      message: t("common.saved"),
      secret: r.data.clientSecret ? { label: t("applications.secretLabel"), value: r.data.clientSecret } : undefined,
    };
  })(prev, form);
}

export async function regenerateSecret(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const r = await api<{ clientSecret: string }>(admin.user, "POST", `/clients/${id(f, "clientId")}/secret`);
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("applications.secretRegenerated"), secret: { label: t("applications.secretLabel"), value: r.data.clientSecret } };
  })(prev, form);
}

export async function deleteApplication(prev: ActionState, form: FormData): Promise<ActionState> {
  const out = await guarded(async (admin, f, t) => {
    const r = await api(admin.user, "DELETE", `/clients/${id(f, "clientId")}`);
    if (!r.ok) return failure(r, [], t);
    return { ok: true };
  })(prev, form);
  if (out.ok) redirect(`${CONSOLE_PATH}/applications?deleted=1`);
  return out;
}

// ---------- users ----------

const HUMAN_INPUTS = [
  "username",
  "password",
  "email",
  "emailVerified",
  "givenName",
  "familyName",
  "nickname",
  "locale",
  "phone",
  "phoneVerified",
  "address",
  "roles",
] as const;
const MACHINE_INPUTS = ["username", "name", "description", "roles"] as const;

export async function createUser(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const type = f.get("type") === "machine" ? "machine" : "human";
    const inputs = type === "machine" ? MACHINE_INPUTS : HUMAN_INPUTS;
    const parsed = userBody(f, type, "create");
    const r = await api<{ id: string; username: string }>(admin.user, "POST", "/users", parsed.body);
    if (!r.ok) return failure(r, inputs, t);
    return {
      ok: true,
      message: t("users.created", { name: r.data.username }),
      next: { href: `${CONSOLE_PATH}/users/${encodeURIComponent(r.data.id)}`, label: t("users.open") },
    };
  })(prev, form);
}

export async function updateUser(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const type = f.get("type") === "machine" ? "machine" : "human";
    const inputs = type === "machine" ? MACHINE_INPUTS : HUMAN_INPUTS;
    const parsed = userBody(f, type, "update");
    const r = await api(admin.user, "PATCH", `/users/${id(f, "userId")}`, parsed.body);
    if (!r.ok) return failure(r, inputs, t);
    return { ok: true, message: t("common.saved") };
  })(prev, form);
}

export async function setUserPassword(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const r = await api(admin.user, "POST", `/users/${id(f, "userId")}/password`, { password: formText(f, "password") });
    if (!r.ok) return failure(r, ["password"], t);
    return { ok: true, message: t("users.passwordSet"), values: {} };
  })(prev, form);
}

export async function setUserAccess(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const body: Record<string, unknown> = {};
    if (f.has("locked")) body.locked = f.get("locked") === "true";
    if (f.has("rolesForm")) body.roles = f.getAll("roles").map(String);
    const r = await api(admin.user, "PATCH", `/users/${id(f, "userId")}`, body);
    if (!r.ok) return failure(r, ["roles", "locked"], t);
    return { ok: true, message: t("common.saved") };
  })(prev, form);
}

export async function liftUserLockout(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const r = await api(admin.user, "DELETE", `/users/${id(f, "userId")}/lockout`);
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("users.lockoutLifted") };
  })(prev, form);
}

export async function deleteUser(prev: ActionState, form: FormData): Promise<ActionState> {
  const out = await guarded(async (admin, f, t) => {
    const r = await api(admin.user, "DELETE", `/users/${id(f, "userId")}`);
    if (!r.ok) return failure(r, [], t);
    return { ok: true };
  })(prev, form);
  if (out.ok) redirect(`${CONSOLE_PATH}/users?deleted=1`);
  return out;
}

export async function addMachineKey(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const text = formText(f, "publicKey").trim();
    let body: Record<string, unknown> = {};
    if (text) {
      try {
        body = { publicKey: JSON.parse(text) };
      } catch {
        return { ok: false, message: t("common.fixFields"), fields: { publicKey: t("users.keyNotJson") } };
      }
    }
    const r = await api<{ keyId: string; privateKey?: Record<string, unknown> }>(admin.user, "POST", `/users/${id(f, "userId")}/keys`, body);
    if (!r.ok) return failure(r, ["publicKey"], t);
    return {
      ok: true,
      message: t("users.keyAdded", { keyId: r.data.keyId }),
      values: {},
      secret: r.data.privateKey
        ? { label: t("users.privateKeyLabel"), value: JSON.stringify(r.data.privateKey, null, 2), filename: `${r.data.keyId}.json` }
        : undefined,
    };
  })(prev, form);
}

export async function removeMachineKey(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const r = await api(admin.user, "DELETE", `/users/${id(f, "userId")}/keys/${id(f, "keyId")}`);
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("users.keyRemoved") };
  })(prev, form);
}

export async function createPat(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const exp = formText(f, "expiresAt").trim();
    // A date input gives a day; the token stays valid until the end of that day (UTC).
    const body = exp ? { expiresAt: /^\d{4}-\d{2}-\d{2}$/.test(exp) ? `${exp}T23:59:59Z` : exp } : {};
    const r = await api<{ token: string }>(admin.user, "POST", `/users/${id(f, "userId")}/pats`, body);
    if (!r.ok) return failure(r, ["expiresAt"], t);
    return { ok: true, message: t("users.patCreated"), values: {}, secret: { label: t("users.patLabel"), value: r.data.token } };
  })(prev, form);
}

export async function revokePat(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const r = await api(admin.user, "DELETE", `/users/${id(f, "userId")}/pats/${id(f, "patId")}`);
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("users.patRevoked") };
  })(prev, form);
}

// ---------- instance ----------

export async function setFeature(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const name = formText(f, "feature");
    const r = await api(admin.user, "PUT", "/features", { [name]: f.getAll("enabled").at(-1) === "true" });
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("common.saved") };
  })(prev, form);
}

export async function rotateKey(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, _f, t) => {
    const r = await api<{ kid: string }>(admin.user, "POST", "/keys/rotate");
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("keys.rotated", { kid: r.data.kid }) };
  })(prev, form);
}

const SETTINGS_GROUPS = ["lifetimes", "lockoutPolicy", "rateLimits", "passwordPolicy", "retention"] as const;

export async function saveSettings(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const parsed = nestedNumbers(f, SETTINGS_GROUPS);
    const body: Record<string, unknown> = { primaryDomain: formText(f, "primaryDomain"), defaultLocale: formText(f, "defaultLocale"), ...parsed.body };
    const reuse = f.get("refreshTokenReuseIntervalSeconds");
    // A number when it is one; anything else goes to the API as typed, which names the field in its error.
    if (typeof reuse === "string") body.refreshTokenReuseIntervalSeconds = /^\s*-?\d+\s*$/.test(reuse) ? Number(reuse) : reuse;
    const inputs = [...f.keys()].filter((k) => k !== "csrf" && !k.startsWith("$"));
    const r = await api(admin.user, "PUT", "/settings", body);
    if (!r.ok) return failure(r, inputs, t);
    return { ok: true, message: t("common.saved") };
  })(prev, form);
}

const BRANDING_INPUTS = ["productName", "logo", "primaryColor", "backgroundColor", "darkMode"] as const;

export async function saveBranding(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const body: Record<string, unknown> = {
      productName: formText(f, "productName"),
      primaryColor: formText(f, "primaryColor"),
      backgroundColor: formText(f, "backgroundColor"),
      darkMode: formText(f, "darkMode"),
    };
    const file = f.get("logo");
    if (f.get("removeLogo") === "on") body.logo = null;
    else if (file instanceof File && file.size > 0) {
      // The API takes the logo as a data URL and checks its type and bytes itself.
      body.logo = `data:${file.type || "application/octet-stream"};base64,${Buffer.from(await file.arrayBuffer()).toString("base64")}`;
    }
    const r = await api(admin.user, "PUT", "/branding", body);
    if (!r.ok) return failure(r, BRANDING_INPUTS, t);
    return { ok: true, message: t("common.saved") };
  })(prev, form);
}

export async function saveTexts(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const locale = encodeURIComponent(formText(f, "locale"));
    const reset = f.get("reset");
    const texts: Record<string, string | null> = {};
    if (typeof reset === "string" && reset) {
      texts[reset] = null;
    } else {
      // Only texts that differ from what the page showed are sent, so that untouched ones keep
      // following the catalog (the API stores a text equal to the default as no override).
      for (const [key, value] of f.entries()) {
        if (!key.startsWith("texts.") || typeof value !== "string") continue;
        const name = key.slice("texts.".length);
        if (value !== formText(f, `shown.${name}`)) texts[name] = value;
      }
    }
    const r = await api(admin.user, "PUT", `/texts/${locale}`, { texts });
    if (!r.ok) {
      const inputs = Object.keys(texts).map((k) => `texts.${k}`);
      return failure(r, inputs, t);
    }
    return { ok: true, message: typeof reset === "string" && reset ? t("texts.resetDone") : t("common.saved"), values: {} };
  })(prev, form);
}
