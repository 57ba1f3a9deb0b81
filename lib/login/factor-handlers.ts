import { dateOf } from "@/lib/clock";
import { seeOther } from "@/lib/http/responses";
import { decrypt, encrypt } from "@/lib/crypto";
import { recordAudit } from "@/lib/store/audit";
import { takeWebauthnChallenge, updateAuthRequest } from "@/lib/store/auth-requests";
import { recordSecondFactor } from "@/lib/store/sessions";
import { deviceCookieAfterSignIn, trustedUsers } from "./device-cookie";
import { accountStep, guarded, toCallback, type Flow } from "./handlers";
import { notifyOwner } from "./owner-notices";
import { CALLBACK_PATH, LOGIN_PATHS, loginUrl } from "./paths";
import { amrWithFactor, checkSecondFactor, confirmTotpEnrolment, type FactorCheck, type FactorMethod } from "./second-factor";
import { confirmPasskeyRegistration, verifyPasskey } from "./passkeys";
import type { SessionAccount } from "./steps";

/**
 * The login forms of the policy's `secondFactor` and `enrolFactor` steps. Each acts only while the
 * policy asks for that step for the request's account; otherwise it sends the browser to the
 * callback, which asks the policy again. Success records the factor in the session's `amr`, so
 * every later request of this session sees it (lib/login/signin-policy.ts `second_factor`).
 */

/**
 * A code of one of the user's authenticators, or a recovery code (wrong ones count toward the
 * lockout), or the answer of one of the user's passkeys to the page's prompt.
 */
export const handleSubmitSecondFactor = guarded(async (flow) => {
  const { inst, settings, id, authRequest, form, actor, request } = flow;
  const account = await accountStep(flow, "secondFactor");
  if (account instanceof Response) return account;
  const passkeyAnswer = form.get("response");
  const result: FactorCheck = passkeyAnswer ? await passkeyAsFactor(flow, account.userId, passkeyAnswer) : await checkSecondFactor(inst, {
    userId: account.userId,
    code: form.get("code") ?? "",
    address: actor.ip ?? "unknown",
    trusted: trustedUsers(inst.masterKey, inst.config.issuer, request).includes(account.userId),
    policy: settings.lockoutPolicy,
  });
  const who = { ...actor, id: account.userId };
  if (!result.ok) {
    await recordAudit(inst.db, who, {
      action: "user.signin.failed",
      targetType: "user",
      targetId: account.userId,
      clientId: authRequest.clientId,
      details: { reason: result.reason, step: "second_factor" },
    });
    if (result.reason === "invalid" && result.lockedUntil) {
      await recordAudit(inst.db, who, {
        action: "user.lockout",
        targetType: "user",
        targetId: account.userId,
        clientId: authRequest.clientId,
        details: { lockedUntil: result.lockedUntil.toISOString(), failures: settings.lockoutPolicy.lockAfterFailures },
      });
      const minutes = Math.max(1, Math.ceil((result.lockedUntil.getTime() - flow.inst.clock.now()) / 60_000));
      await notifyOwner(inst, account.userId, "accountLocked", actor, { minutes });
    }
    const wait = "retryAfterSeconds" in result ? { retrySeconds: String(result.retryAfterSeconds) } : null;
    const formError = passkeyAnswer ? "passkeyFailed" : result.reason === "invalid" ? "wrongCode" : result.reason;
    await updateAuthRequest(inst.db, id, { formError, formValues: wait });
    return seeOther(loginUrl(LOGIN_PATHS.secondFactor, id));
  }
  await completeWithFactor(flow, account, result.method, { via: result.via, factorId: result.factorId }, null);
  return seeOther(`${CALLBACK_PATH}?id=${encodeURIComponent(id)}`, [deviceCookieAfterSignIn(inst.masterKey, inst.config.issuer, request, account.userId)]);
});

/**
 * The second factor went through: in one transaction the session's `amr` and auth time say so,
 * the audit log records it, and the pending request keeps only what its next page shows.
 */
async function completeWithFactor(flow: Flow, account: SessionAccount, method: FactorMethod, details: Record<string, unknown>, formValues: Record<string, string> | null): Promise<void> {
  const amr = amrWithFactor(account.amr, method);
  await flow.inst.db.transaction(async (tx) => {
    await recordSecondFactor(tx, account.id, amr, dateOf(flow.inst.clock));
    await recordAudit(tx, { ...flow.actor, id: account.userId }, {
      action: "user.signin.second_factor",
      targetType: "session",
      targetId: account.id,
      clientId: flow.authRequest.clientId,
      details: { ...details, amr },
    });
    await updateAuthRequest(tx, flow.id, { formError: null, formValues });
  });
}

/**
 * A passkey answering the factor page's prompt (its challenge taken from the pending request, so
 * it answers once). A failed passkey does not count toward the lockout: it cannot be guessed.
 */
async function passkeyAsFactor(flow: Flow, userId: string, answer: string): Promise<FactorCheck> {
  const challenge = await takeWebauthnChallenge(flow.inst.db, flow.id);
  const result = challenge ? await verifyPasskey(flow.inst, answer, challenge, { userId }) : ({ ok: false } as const);
  return result.ok ? { ok: true, method: result.method, via: "passkey", factorId: result.factorId } : { ok: false, reason: "invalid" };
}

const codesAad = (authRequestId: string) => `login-recovery-codes:${authRequestId}`;

/**
 * Enrolment of an authenticator during sign-in (a second factor is required and the user has
 * none): the first code confirms the pending factor shown on the page and completes the sign-in.
 * A user's first factor comes with recovery codes, shown once on the next page; until the user
 * continues from there they are kept with the pending request, encrypted under the master key.
 */
export const handleSubmitEnrolFactor = guarded(async (flow) => {
  const { inst, id, form, actor } = flow;
  const account = await accountStep(flow, "enrolFactor");
  if (account instanceof Response) return account;
  const who = { ...actor, id: account.userId };
  const factorId = form.get("factorId") ?? "";
  const name = form.get("name") ?? "";
  // A passkey created on the page (its answer in `response`), or the authenticator app's first code.
  const passkey = form.get("response");
  let outcome: { ok: false } | { ok: true; recoveryCodes: string[] | null; method: FactorMethod };
  if (passkey) outcome = await confirmPasskeyRegistration(inst, account.userId, factorId, { response: passkey, name }, who);
  else {
    const app = await confirmTotpEnrolment(inst, account.userId, factorId, { code: form.get("code") ?? "", name }, who);
    outcome = app.ok ? { ...app, method: "otp" } : app;
  }
  if (!outcome.ok) {
    await updateAuthRequest(inst.db, id, { formError: passkey ? "passkeyFailed" : "wrongCode", formValues: { name: name.slice(0, 64) } });
    return seeOther(loginUrl(LOGIN_PATHS.enrolFactor, id));
  }
  const codes = outcome.recoveryCodes ? { recoveryCodes: encrypt(inst.masterKey, JSON.stringify(outcome.recoveryCodes), codesAad(id)) } : null;
  await completeWithFactor(flow, account, outcome.method, { via: "enrolment" }, codes);
  if (outcome.recoveryCodes) return seeOther(loginUrl(LOGIN_PATHS.recoveryCodes, id));
  return toCallback(id);
});

/** The recovery codes kept for their one showing after enrolment, or null. */
export function recoveryCodesToShow(masterKey: Buffer, authRequestId: string, formValues: Record<string, string> | null): string[] | null {
  const sealed = formValues?.recoveryCodes;
  if (!sealed) return null;
  try {
    return JSON.parse(decrypt(masterKey, sealed, codesAad(authRequestId))) as string[];
  } catch {
    return null;
  }
}

/** "I have saved my recovery codes": forget them and go on with the request. */
export const handleSubmitRecoveryCodes = guarded(async ({ inst, id }) => {
  await updateAuthRequest(inst.db, id, { formError: null, formValues: null });
  return toCallback(id);
});
