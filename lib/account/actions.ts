import { dateOf } from "@/lib/clock";
import { z } from "zod";
import type { Engine } from "@/lib/engine";
import type { AppAccess } from "@/lib/first-party/app-session";
import { accountPolicyOf } from "@/lib/login/account-policy";
import { confirmEmailCode, sendEmailVerification } from "@/lib/login/email-verification";
import { accountKeyOf, attemptVerdict, clearFailures, recordFailure } from "@/lib/login/lockout";
import { confirmTotpEnrolment, newRecoveryCodes, removeSecondFactor } from "@/lib/login/second-factor";
import { confirmPasskeyRegistration } from "@/lib/login/passkeys";
import { notifyOwner } from "@/lib/login/owner-notices";
import { checkPasswordPolicy, verifyPassword } from "@/lib/passwords";
import { recordAudit, type Actor } from "@/lib/store/audit";
import { revokeConsent } from "@/lib/store/consents";
import { listFactors } from "@/lib/store/factors";
import { revocationHorizon, revokeAllGrants, revokeSessionTokens } from "@/lib/store/grants";
import { mutate, type Invalidation } from "@/lib/store/invalidation";
import { endUserSession, getLiveSession, liveSessionsOfUser } from "@/lib/store/sessions";
import { getSettings } from "@/lib/store/settings";
import { getPasswordHash, setPassword, updateUser } from "@/lib/store/users";
import { email as emailField, personNameFault } from "@/lib/users/fields";
import { LOCALES } from "@/lib/i18n/locales";
import { isRecentSignIn } from "./app";

/**
 * What a person can change on their own account page. Each action takes the page's access (the
 * user and the login session behind it) and the form's fields, changes what it may, records an
 * audit event, and says how it went: `done` with a message key, or an error key for the section.
 * The HTTP side is lib/account/handlers.ts.
 */
export type Outcome =
  | {
      ok: true;
      done: string;
      recoveryCodes?: string[];
      /** The language the pages are to show from now on; null: the browser's (profile saved). */
      pageLocale?: string | null;
    }
  | { ok: false; error: string; violations?: string[] };
type Ctx = { inst: Engine; access: AppAccess; actor: Actor; form: URLSearchParams };

const field = (form: URLSearchParams, name: string) => (form.get(name) ?? "").trim();

/** Sessions revoke tokens; the active-token cache must learn it after the commit. */
const TOKENS_STALE: Invalidation[] = [{ cache: "accessTokens" }];

export async function updateProfile({ inst, access, actor, form }: Ctx): Promise<Outcome> {
  const givenName = field(form, "givenName");
  const familyName = field(form, "familyName");
  const locale = field(form, "locale");
  const faults = [personNameFault(givenName), personNameFault(familyName)];
  if (faults.includes("characters")) return { ok: false, error: "nameCharacters" };
  if (faults.includes("tooLong")) return { ok: false, error: "nameTooLong" };
  if (locale && !(LOCALES as readonly string[]).includes(locale)) return { ok: false, error: "localeUnknown" };
  await inst.db.transaction(async (tx) => {
    await updateUser(tx, access.user.id, { givenName: givenName || null, familyName: familyName || null, locale: locale || null }, dateOf(inst.clock));
    await recordAudit(tx, actor, { action: "user.updated", targetType: "user", targetId: access.user.id, details: { fields: ["givenName", "familyName", "locale"], by: "self" } });
  });
  // The language chosen here is the one the page goes on in, as well as its mails'.
  return { ok: true, done: "profileSaved", pageLocale: locale || null };
}

/**
 * A new address is unverified until the mailed code or link comes back. The change needs a recent
 * sign-in, as second factors do, and the previous address is told of it: password reset links go
 * to the account's address, so someone who found a browser left signed in could otherwise take
 * the account for good by changing the address and resetting the password, unseen by its owner.
 */
export async function changeEmail(ctx: Ctx): Promise<Outcome> {
  const { inst, access, actor, form } = ctx;
  const value = field(form, "email");
  if (!emailField.safeParse(value).success) return { ok: false, error: "emailInvalid" };
  if (value.toLowerCase() === access.user.email?.toLowerCase()) return { ok: true, done: "emailUnchanged" };
  if (!(await signedInRecently(ctx))) return { ok: false, error: "emailSignInAgain" };
  const previous = access.user.email;
  const updated = await inst.db.transaction(async (tx) => {
    const user = await updateUser(tx, access.user.id, { email: value, emailVerified: false }, dateOf(inst.clock));
    await recordAudit(tx, actor, { action: "user.email_changed", targetType: "user", targetId: access.user.id, details: { from: access.user.email, to: value } });
    return user;
  });
  if (updated) await sendEmailVerification(inst, updated, actor, updated.locale);
  if (updated && previous) await notifyOwner(inst, updated.id, "emailChanged", actor, { newEmail: value }, previous);
  return { ok: true, done: accountPolicyOf(await getSettings(inst)).emailVerification === "off" ? "emailChanged" : "emailChangedVerify" };
}

export async function resendVerification({ inst, access, actor }: Ctx): Promise<Outcome> {
  const sent = await sendEmailVerification(inst, access.user, actor, access.user.locale);
  return sent ? { ok: true, done: "verificationSent" } : { ok: false, error: "verificationLimited" };
}

/**
 * The code of the confirmation mail, typed on the page (the mail's link does the same). Each
 * mail's code takes a few wrong tries before it is spent (lib/store/email-verifications.ts).
 */
export async function confirmEmail({ inst, access, actor, form }: Ctx): Promise<Outcome> {
  const code = (form.get("code") ?? "").trim();
  return (await confirmEmailCode(inst, access.user.id, code, actor)) ? { ok: true, done: "emailConfirmed" } : { ok: false, error: "emailCodeWrong" };
}

/**
 * A new password needs the current one (tried under the lockout's delays for this account, like
 * a sign-in) and the password policy. Every other session of the user ends, with its tokens.
 */
export async function changePassword({ inst, access, actor, form }: Ctx): Promise<Outcome> {
  const settings = await getSettings(inst);
  const attempt = { accountKey: accountKeyOf(access.user.id, "", ""), address: actor.ip ?? "unknown", trusted: true };
  const verdict = await attemptVerdict(inst.db, settings.lockoutPolicy, attempt, dateOf(inst.clock));
  if (!verdict.allowed) return { ok: false, error: "throttled" };
  const hash = await getPasswordHash(inst.db, access.user.id);
  if (!hash || !(await verifyPassword(hash, (form.get("current") ?? "").slice(0, 1024)))) {
    await recordFailure(inst.db, settings.lockoutPolicy, { ...attempt, userId: access.user.id }, dateOf(inst.clock));
    await recordAudit(inst.db, actor, { action: "user.password_change_failed", targetType: "user", targetId: access.user.id, details: { reason: "current_password" } });
    return { ok: false, error: "currentPasswordWrong" };
  }
  await clearFailures(inst.db, attempt);
  const password = form.get("password") ?? "";
  if (password !== (form.get("confirm") ?? "")) return { ok: false, error: "passwordMismatch" };
  const violations = checkPasswordPolicy(password, settings.passwordPolicy);
  if (violations.length) return { ok: false, error: "passwordPolicy", violations };
  await mutate(inst, TOKENS_STALE, async (tx) => {
    await setPassword(tx, access.user.id, password, { now: dateOf(inst.clock) });
    const others = (await liveSessionsOfUser(tx, access.user.id, dateOf(inst.clock))).filter((s) => s.id !== access.sid);
    const horizon = others.length ? await revocationHorizon(tx, dateOf(inst.clock)) : dateOf(inst.clock);
    for (const s of others) {
      await endUserSession(tx, access.user.id, s.id, dateOf(inst.clock));
      await revokeSessionTokens(tx, s.id, "password_changed", { horizon, now: dateOf(inst.clock) });
    }
    await recordAudit(tx, actor, { action: "user.password_changed", targetType: "user", targetId: access.user.id, details: { sessionsEnded: others.length } });
  });
  return { ok: true, done: "passwordChanged" };
}

/** Whether the login session behind the page signed in recently enough to change second factors or the address. */
async function signedInRecently({ inst, access }: Ctx): Promise<boolean> {
  const session = await getLiveSession(inst.db, access.userAgentId, access.sid, dateOf(inst.clock));
  return !!session && isRecentSignIn(session.authTime, inst.clock.now());
}

/** Confirms the pending authenticator shown on the page with its first code; the first factor brings recovery codes. */
export async function addAuthenticator(ctx: Ctx): Promise<Outcome> {
  const { inst, access, actor, form } = ctx;
  if (accountPolicyOf(await getSettings(inst)).mfa === "off") return { ok: false, error: "factorsOff" };
  if (!(await signedInRecently(ctx))) return { ok: false, error: "signInAgain" };
  const code = (form.get("code") ?? "").replace(/\s/g, "");
  const outcome = await confirmTotpEnrolment(inst, access.user.id, form.get("factorId") ?? "", { code, name: field(form, "name") }, actor);
  if (!outcome.ok) return { ok: false, error: "wrongCode" };
  return { ok: true, done: "authenticatorAdded", ...(outcome.recoveryCodes ? { recoveryCodes: outcome.recoveryCodes } : {}) };
}

/** Completes the passkey registration the page started with the browser's answer. */
export async function addPasskey(ctx: Ctx): Promise<Outcome> {
  const { inst, access, actor, form } = ctx;
  if (accountPolicyOf(await getSettings(inst)).mfa === "off") return { ok: false, error: "factorsOff" };
  if (!(await signedInRecently(ctx))) return { ok: false, error: "signInAgain" };
  const outcome = await confirmPasskeyRegistration(inst, access.user.id, form.get("factorId") ?? "", { response: form.get("response") ?? "", name: field(form, "name") }, actor);
  if (!outcome.ok) return { ok: false, error: "passkeyFailed" };
  return { ok: true, done: "passkeyAdded", ...(outcome.recoveryCodes ? { recoveryCodes: outcome.recoveryCodes } : {}) };
}

/**
 * Removes one factor, by the rule the administrator's removal follows too (`removeSecondFactor`):
 * the last one takes the recovery codes with it and, while the settings require a second factor,
 * cannot be removed here (an administrator can, and the next sign-in then enrols a new one).
 */
export async function removeFactor(ctx: Ctx): Promise<Outcome> {
  const { inst, access, actor, form } = ctx;
  if (!(await signedInRecently(ctx))) return { ok: false, error: "signInAgain" };
  const mfa = accountPolicyOf(await getSettings(inst)).mfa;
  const removed = await removeSecondFactor(inst.db, access.user.id, form.get("factorId") ?? "", actor, { byOwner: true, mfa });
  if (!removed.ok) return { ok: false, error: removed.reason === "gone" ? "factorGone" : "factorRequired" };
  return { ok: true, done: "factorRemoved" };
}

export async function regenerateRecoveryCodes(ctx: Ctx): Promise<Outcome> {
  const { inst, access, actor } = ctx;
  if (!(await signedInRecently(ctx))) return { ok: false, error: "signInAgain" };
  if (!(await listFactors(inst.db, access.user.id)).length) return { ok: false, error: "noFactor" };
  return { ok: true, done: "recoveryCodesCreated", recoveryCodes: await newRecoveryCodes(inst, access.user.id, actor) };
}

/** Signs one of the user's sessions out (any browser), revoking what was issued through it. */
export async function endSession({ inst, access, actor, form }: Ctx): Promise<Outcome> {
  const sessionId = form.get("sessionId") ?? "";
  const ended = await mutate(inst, TOKENS_STALE, async (tx) => {
    if (!(await endUserSession(tx, access.user.id, sessionId, dateOf(inst.clock)))) return false;
    await revokeSessionTokens(tx, sessionId, "signed_out_from_account", { now: dateOf(inst.clock) });
    await recordAudit(tx, actor, { action: "session.ended", targetType: "session", targetId: sessionId, details: { from: "account" } });
    return true;
  });
  return ended ? { ok: true, done: sessionId === access.sid ? "signedOutHere" : "sessionEnded" } : { ok: false, error: "sessionGone" };
}

/** Withdraws an application's access: its grants (and tokens) for the user, and the consent given to it. */
export async function revokeApp({ inst, access, actor, form }: Ctx): Promise<Outcome> {
  const clientId = z.string().min(1).max(200).safeParse(form.get("clientId"));
  if (!clientId.success) return { ok: false, error: "appGone" };
  const revoked = await mutate(inst, TOKENS_STALE, async (tx) => {
    const consent = await revokeConsent(tx, access.user.id, clientId.data, dateOf(inst.clock));
    const grants = await revokeAllGrants(tx, { clientId: clientId.data, userId: access.user.id }, "revoked_by_user", dateOf(inst.clock));
    if (!consent && !grants) return false;
    await recordAudit(tx, actor, { action: "consent.revoked", targetType: "user", targetId: access.user.id, clientId: clientId.data, details: { by: "self", grants } });
    return true;
  });
  return revoked ? { ok: true, done: "appRevoked" } : { ok: false, error: "appGone" };
}

export const ACCOUNT_ACTIONS = {
  profile: updateProfile,
  email: changeEmail,
  "verify-email": resendVerification,
  "confirm-email": confirmEmail,
  password: changePassword,
  "add-authenticator": addAuthenticator,
  "add-passkey": addPasskey,
  "remove-factor": removeFactor,
  "recovery-codes": regenerateRecoveryCodes,
  "end-session": endSession,
  "revoke-app": revokeApp,
} as const satisfies Record<string, (ctx: Ctx) => Promise<Outcome>>;

export type AccountAction = keyof typeof ACCOUNT_ACTIONS;
