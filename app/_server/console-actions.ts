"use server";

import { getTranslations } from "next-intl/server";
import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { apiBody, byApiChecks, clientBody, fieldErrors, formText, formValues, nestedNumbers, userBody, type FormBody, type Parsed, type SettingsGroup } from "@torii/core/console/forms";
import { actionAdmin, call, ConsoleForbidden, type Admin, type ApiResult } from "@/app/_server/console-next";
import type { ActionState } from "@torii/core/console/state";

/**
 * Console mutations. Each one: a live console session of an administrator plus the form's CSRF
 * token (actionAdmin), then exactly one management API call through the API's route table, whose
 * validation messages come back as field errors by input name.
 */

type Handler = (admin: Admin, form: FormData, t: Awaited<ReturnType<typeof getTranslations>>) => Promise<Omit<ActionState, "seq">>;

function guarded(handler: Handler) {
  // `prev` and the form arrive from the browser with the post: a crafted request may leave
  // them out or send anything in their place. Without a form there is no CSRF token to check.
  return async (prev: ActionState | null | undefined, form: FormData | undefined): Promise<ActionState> => {
    const t = await getTranslations("console");
    const seq = (typeof prev?.seq === "number" ? prev.seq : 0) + 1;
    if (!(form instanceof FormData)) return { seq, ok: false, message: t("common.forbidden") };
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

function parseFailure(p: Parsed<unknown>, inputs: readonly string[], t: Awaited<ReturnType<typeof getTranslations>>) {
  return { ok: false, message: t("common.fixFields"), fields: fieldErrors(p.fields, inputs, t) };
}

const id = (form: FormData, name: string) => formText(form, name);

// ---------- applications ----------

const CLIENT_INPUTS = [
  "name",
  "redirectUris",
  "postLogoutRedirectUris",
  "allowedOrigins",
  "originsMode",
  "firstParty",
  "responseTypes",
  "grantTypes",
  "authMethod",
  "jwks",
  "accessTokenType",
  "idTokenUserinfoAssertion",
  "accessTokenLifetime",
  "idTokenLifetime",
  "refreshTokenLifetime",
  "apiScopes",
] as const;

export async function createApplication(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const parsed = clientBody(f, "create");
    if (parsed.fields.length) return parseFailure(parsed, CLIENT_INPUTS, t);
    const r = await call(admin.user, "createClient", { body: parsed.body });
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
    const r = await call(admin.user, "updateClient", { params: { clientId: id(f, "clientId") }, body: parsed.body });
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
    const r = await call(admin.user, "newClientSecret", { params: { clientId: id(f, "clientId") } });
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("applications.secretRegenerated"), secret: { label: t("applications.secretLabel"), value: r.data.clientSecret } };
  })(prev, form);
}

export async function deleteApplication(prev: ActionState, form: FormData): Promise<ActionState> {
  const out = await guarded(async (admin, f, t) => {
    const r = await call(admin.user, "deleteClient", { params: { clientId: id(f, "clientId") } });
    if (!r.ok) return failure(r, [], t);
    return { ok: true };
  })(prev, form);
  if (out.ok) redirect(`${CONSOLE_PATH}/applications?deleted=1`);
  return out;
}

// ---------- APIs ----------

const API_INPUTS = ["identifier", "name", "scopes", "roles", "accessTokenType", "accessTokenLifetime", "jwks"] as const;

export async function createApiResource(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const parsed = apiBody(f, "create");
    if (parsed.fields.length) return parseFailure(parsed, API_INPUTS, t);
    const r = await call(admin.user, "createApi", { body: parsed.body });
    if (!r.ok) return failure(r, API_INPUTS, t);
    return {
      ok: true,
      message: t("apis.createdMsg", { name: r.data.name }),
      next: { href: `${CONSOLE_PATH}/apis/${encodeURIComponent(r.data.apiId)}`, label: t("apis.open") },
    };
  })(prev, form);
}

export async function updateApiResource(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const apiId = id(f, "apiId");
    const current = await call(admin.user, "getApi", { params: { apiId } });
    if (!current.ok) return failure(current, [], t);
    const parsed = apiBody(f, "update", current.data);
    if (parsed.fields.length) return parseFailure(parsed, API_INPUTS, t);
    const r = await call(admin.user, "updateApi", { params: { apiId }, body: parsed.body });
    if (!r.ok) return failure(r, API_INPUTS, t);
    return { ok: true, message: t("common.saved") };
  })(prev, form);
}

export async function rotateApiResourceSecret(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const r = await call(admin.user, "rotateApiSecret", { params: { apiId: id(f, "apiId") } });
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("apis.secretCreated"), secret: { label: t("apis.secretLabel"), value: r.data.clientSecret } };
  })(prev, form);
}

export async function deleteApiResource(prev: ActionState, form: FormData): Promise<ActionState> {
  const out = await guarded(async (admin, f, t) => {
    const r = await call(admin.user, "deleteApi", { params: { apiId: id(f, "apiId") } });
    if (!r.ok) return failure(r, [], t);
    return { ok: true };
  })(prev, form);
  if (out.ok) redirect(`${CONSOLE_PATH}/apis?deleted=1`);
  return out;
}

/**
 * One role to several users at once, by login name (one per line). Names that name no user are
 * listed back and the others still get the role: a second call without the unknown names, since
 * the API changes nothing while any name is unknown.
 */
export async function assignRoleInBulk(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const params = { apiId: id(f, "apiId"), roleKey: id(f, "roleKey") };
    const usernames = [...new Set(formText(f, "usernames").split(/\r?\n/).map((l) => l.trim()).filter(Boolean))];
    if (!usernames.length) return { ok: false, message: t("common.fixFields"), fields: { usernames: t("apis.holdersNone") } };
    let r = await call(admin.user, "assignRole", { params, body: { usernames } });
    let missing: string[] = [];
    if (!r.ok && r.fields.length && r.fields.every((p) => p.code === "username_unknown")) {
      missing = r.fields.map((p) => usernames[Number(p.path.split(".")[1])]!);
      const known = usernames.filter((n) => !missing.includes(n));
      if (!known.length) return { ok: false, message: t("common.fixFields"), fields: { usernames: t("apis.holdersNotFound", { names: missing.join(", "), count: missing.length }) } };
      r = await call(admin.user, "assignRole", { params, body: { usernames: known } });
    }
    if (!r.ok) return failure(r, ["usernames"], t);
    const assigned = usernames.length - missing.length;
    const fields: Record<string, string> = missing.length ? { usernames: t("apis.holdersNotFound", { names: missing.join(", "), count: missing.length }) } : {};
    return {
      ok: true,
      message: t("apis.holdersAssigned", { count: assigned, role: params.roleKey }),
      fields,
      values: {},
    };
  })(prev, form);
}

/** Takes one role from one user or client (the remove button in a role's holder list: its row goes, which is the answer). */
export async function removeRoleHolder(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const holder = id(f, "holderId");
    const body = id(f, "kind") === "client" ? { clientIds: [holder] } : { userIds: [holder] };
    const r = await call(admin.user, "unassignRole", { params: { apiId: id(f, "apiId"), roleKey: id(f, "roleKey") }, body });
    if (!r.ok) return failure(r, [], t);
    return { ok: true };
  })(prev, form);
}

/** The roles of a user or client at the APIs the form showed (ApiRolesForm). */
export async function setApiRoles(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const body = byApiChecks(f, "apiRoles", f.getAll("apiShown").map(String));
    const userId = id(f, "userId");
    const r = userId
      ? await call(admin.user, "setUserRoles", { params: { userId }, body })
      : await call(admin.user, "setClientRoles", { params: { clientId: id(f, "clientId") }, body });
    if (!r.ok) return failure(r, ["apiRoles"], t);
    return { ok: true, message: t("common.saved") };
  })(prev, form);
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
    const r = await call(admin.user, "createUser", { body: parsed.body });
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
    const r = await call(admin.user, "updateUser", { params: { userId: id(f, "userId") }, body: parsed.body });
    if (!r.ok) return failure(r, inputs, t);
    return { ok: true, message: t("common.saved") };
  })(prev, form);
}

export async function setUserPassword(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const body = { password: formText(f, "password"), passwordChangeRequired: f.get("passwordChangeRequired") === "on" };
    const r = await call(admin.user, "setUserPassword", { params: { userId: id(f, "userId") }, body });
    if (!r.ok) return failure(r, ["password", "passwordChangeRequired"], t);
    return { ok: true, message: t("users.passwordSet"), values: {} };
  })(prev, form);
}

export async function setUserAccess(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const body: FormBody<"updateUser"> = {
      ...(f.has("locked") ? { locked: f.get("locked") === "true" } : {}),
      ...(f.has("rolesForm") ? { roles: f.getAll("roles").map(String) } : {}),
      ...(f.has("passwordChangeRequired") ? { passwordChangeRequired: f.get("passwordChangeRequired") === "true" } : {}),
    };
    const r = await call(admin.user, "updateUser", { params: { userId: id(f, "userId") }, body });
    if (!r.ok) return failure(r, ["roles", "locked", "passwordChangeRequired"], t);
    return { ok: true, message: t("common.saved") };
  })(prev, form);
}

export async function liftUserLockout(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const r = await call(admin.user, "liftUserLockout", { params: { userId: id(f, "userId") } });
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("users.lockoutLifted") };
  })(prev, form);
}

export async function removeUserFactor(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const r = await call(admin.user, "deleteUserFactor", { params: { userId: id(f, "userId"), factorId: id(f, "factorId") } });
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("users.factorRemoved") };
  })(prev, form);
}

export async function resetUserFactors(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const r = await call(admin.user, "resetUserFactors", { params: { userId: id(f, "userId") } });
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("users.factorsWereReset") };
  })(prev, form);
}

export async function deleteUser(prev: ActionState, form: FormData): Promise<ActionState> {
  const out = await guarded(async (admin, f, t) => {
    const r = await call(admin.user, "deleteUser", { params: { userId: id(f, "userId") } });
    if (!r.ok) return failure(r, [], t);
    return { ok: true };
  })(prev, form);
  if (out.ok) redirect(`${CONSOLE_PATH}/users?deleted=1`);
  return out;
}

export async function addMachineKey(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const text = formText(f, "publicKey").trim();
    let body = {} as FormBody<"addMachineKey">;
    if (text) {
      try {
        // The key as the administrator pasted it; the API's schema checks it.
        body = { publicKey: JSON.parse(text) as FormBody<"addMachineKey">["publicKey"] };
      } catch {
        return { ok: false, message: t("common.fixFields"), fields: { publicKey: t("users.keyNotJson") } };
      }
    }
    const r = await call(admin.user, "addMachineKey", { params: { userId: id(f, "userId") }, body });
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
    const r = await call(admin.user, "deleteMachineKey", { params: { userId: id(f, "userId"), keyId: id(f, "keyId") } });
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("users.keyRemoved") };
  })(prev, form);
}

export async function createPat(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const exp = formText(f, "expiresAt").trim();
    // A date input gives a day; the token stays valid until the end of that day (UTC).
    const body = exp ? { expiresAt: /^\d{4}-\d{2}-\d{2}$/.test(exp) ? `${exp}T23:59:59Z` : exp } : {};
    const r = await call(admin.user, "createPat", { params: { userId: id(f, "userId") }, body });
    if (!r.ok) return failure(r, ["expiresAt"], t);
    return { ok: true, message: t("users.patCreated"), values: {}, secret: { label: t("users.patLabel"), value: r.data.token } };
  })(prev, form);
}

export async function revokePat(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const r = await call(admin.user, "deletePat", { params: { userId: id(f, "userId"), patId: id(f, "patId") } });
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("users.patRevoked") };
  })(prev, form);
}

export async function withdrawConsent(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const r = await call(admin.user, "revokeConsent", { params: { userId: id(f, "userId"), clientId: id(f, "clientId") } });
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("users.consentRevoked") };
  })(prev, form);
}

// ---------- instance ----------

export async function setFeature(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const name = formText(f, "feature");
    const r = await call(admin.user, "setFeatures", { body: { [name]: f.getAll("enabled").at(-1) === "true" } as FormBody<"setFeatures"> });
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("common.saved") };
  })(prev, form);
}

export async function rotateKey(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, _f, t) => {
    const r = await call(admin.user, "rotateSigningKey");
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("keys.rotated", { kid: r.data.kid }) };
  })(prev, form);
}

const SETTINGS_GROUPS: readonly SettingsGroup[] = ["lifetimes", "lockoutPolicy", "rateLimits", "passwordPolicy", "retention", "registration", "passwordReset"];

export async function saveSettings(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const parsed = nestedNumbers(f, SETTINGS_GROUPS);
    const reuse = f.get("refreshTokenReuseIntervalSeconds");
    const body: FormBody<"updateSettings"> = {
      primaryDomain: formText(f, "primaryDomain"),
      defaultLocale: formText(f, "defaultLocale"),
      ...parsed.body,
      ...(f.has("emailVerification") ? { emailVerification: formText(f, "emailVerification") } : {}),
      ...(f.has("mfa") ? { mfa: formText(f, "mfa") } : {}),
      // A number when it is one; anything else goes to the API as typed, which names the field in its error.
      ...(typeof reuse === "string" ? { refreshTokenReuseIntervalSeconds: /^\s*-?\d+\s*$/.test(reuse) ? Number(reuse) : reuse } : {}),
    };
    const inputs = [...f.keys()].filter((k) => k !== "csrf" && !k.startsWith("$"));
    const r = await call(admin.user, "updateSettings", { body });
    if (!r.ok) return failure(r, inputs, t);
    return { ok: true, message: t("common.saved") };
  })(prev, form);
}

const BRANDING_INPUTS = ["productName", "logo", "primaryColor", "backgroundColor", "darkMode"] as const;

export async function saveBranding(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const body: FormBody<"updateBranding"> = {
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
    const r = await call(admin.user, "updateBranding", { body });
    if (!r.ok) return failure(r, BRANDING_INPUTS, t);
    return { ok: true, message: t("common.saved") };
  })(prev, form);
}

export async function saveTexts(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const locale = formText(f, "locale");
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
    const r = await call(admin.user, "setLoginTexts", { params: { locale }, body: { texts } });
    if (!r.ok) {
      const inputs = Object.keys(texts).map((k) => `texts.${k}`);
      return failure(r, inputs, t);
    }
    return { ok: true, message: typeof reset === "string" && reset ? t("texts.resetDone") : t("common.saved"), values: {} };
  })(prev, form);
}

// ---------- mail ----------

const SMTP_INPUTS = ["host", "port", "security", "user", "password", "fromAddress", "fromName"] as const;

export async function saveSmtp(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const port = formText(f, "port").trim();
    const password = formText(f, "password");
    const body: FormBody<"setSmtpSettings"> = {
      host: formText(f, "host"),
      port: /^\d+$/.test(port) ? Number(port) : port,
      security: formText(f, "security"),
      user: formText(f, "user").trim() || null,
      fromAddress: formText(f, "fromAddress").trim(),
      fromName: formText(f, "fromName").trim() || null,
      // An empty password field keeps the stored one; "clear" removes it.
      ...(f.get("clearPassword") === "on" ? { password: null } : password ? { password } : {}),
    };
    const r = await call(admin.user, "setSmtpSettings", { body });
    if (!r.ok) return failure(r, SMTP_INPUTS, t);
    return { ok: true, message: t("common.saved"), values: {} };
  })(prev, form);
}

export async function removeSmtp(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, _f, t) => {
    const r = await call(admin.user, "deleteSmtpSettings");
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("mail.removed") };
  })(prev, form);
}

export async function sendTestMail(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const r = await call(admin.user, "sendTestMail", { body: { to: formText(f, "to").trim() } });
    if (!r.ok) return failure(r, ["to"], t);
    if (r.data.state === "sent") return { ok: true, message: t("mail.testSent", { to: r.data.to }) };
    return { ok: false, message: t("mail.testFailed", { error: r.data.lastError ?? r.data.state }) };
  })(prev, form);
}

export async function mailPasswordReset(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const r = await call(admin.user, "sendPasswordReset", { params: { userId: id(f, "userId") } });
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("users.resetMailed") };
  })(prev, form);
}

export async function mailEmailVerification(prev: ActionState, form: FormData): Promise<ActionState> {
  return guarded(async (admin, f, t) => {
    const r = await call(admin.user, "sendEmailVerification", { params: { userId: id(f, "userId") } });
    if (!r.ok) return failure(r, [], t);
    return { ok: true, message: t("users.verifyMailed") };
  })(prev, form);
}
