import { dateOf } from "@/lib/clock";
import { seeOther } from "@/lib/http/responses";
import { recordAudit } from "@/lib/store/audit";
import { takeWebauthnChallenge, updateAuthRequest } from "@/lib/store/auth-requests";
import { getUser } from "@/lib/store/users";
import { accountPolicyOf } from "./account-policy";
import { deviceCookieAfterSignIn, trustedUsers } from "./device-cookie";
import { accountKeyOf, attemptVerdict } from "./lockout";
import { guarded, refusal, startSession } from "./handlers";
import { passkeyPrompt, verifyPasskey } from "./passkeys";
import { CALLBACK_PATH, LOGIN_PATHS, loginUrl } from "./paths";
import type { Engine } from "@/lib/engine";

/**
 * "Sign in with a passkey" on the first login page and on the password page: no login name, no
 * password. The passkey's user must be allowed to finish the request (the sign-in policy, as for
 * a password); the session records `amr` [`hwk`|`swk`, `mfa`] (lib/login/passkeys.ts says why
 * both). The account's lockout applies as for a password.
 */
export const handleSubmitPasskeySignIn = guarded(async (flow) => {
  const { request, inst, settings, id, authRequest, form, actor } = flow;
  // A refusal shows the page the passkey was tried on again: the password page offers one too.
  const page = form.get("page") === "password" && authRequest.loginName ? LOGIN_PATHS.password : LOGIN_PATHS.loginName;
  const challenge = await takeWebauthnChallenge(inst.db, id);
  // With second factors switched off, passkeys are not offered and not taken either.
  const enabled = accountPolicyOf(settings).mfa !== "off";
  const result = challenge && enabled ? await verifyPasskey(inst, form.get("response") ?? "", challenge) : ({ ok: false } as const);
  const user = result.ok ? await getUser(inst.db, result.userId) : undefined;
  if (!result.ok || !user || user.locked || user.type !== "human") {
    await recordAudit(inst.db, actor, {
      action: "user.signin.failed",
      targetType: "user",
      targetId: user?.id ?? null,
      clientId: authRequest.clientId,
      details: { reason: result.ok ? "user_locked" : "passkey", step: "passkey" },
    });
    await updateAuthRequest(inst.db, id, { formError: "passkeyFailed", formValues: null });
    return seeOther(loginUrl(page, id));
  }
  // The lockout's rule for passwords holds here too: an account locked for browsers that never
  // signed in to it (and a throttled address) is refused, so a stolen passkey used from a new
  // browser cannot get round a lock. A failed passkey counts nothing: it cannot be guessed.
  const verdict = await attemptVerdict(inst.db, settings.lockoutPolicy, {
    accountKey: accountKeyOf(user.id, "", ""),
    address: actor.ip ?? "unknown",
    trusted: trustedUsers(inst.masterKey, inst.config.issuer, request).includes(user.id),
  }, dateOf(inst.clock));
  if (!verdict.allowed) {
    await recordAudit(inst.db, actor, {
      action: "user.signin.failed",
      targetType: "user",
      targetId: user.id,
      clientId: authRequest.clientId,
      details: { reason: verdict.reason, step: "passkey" },
    });
    await updateAuthRequest(inst.db, id, { formError: verdict.reason, formValues: { retrySeconds: String(verdict.retryAfterSeconds) } });
    return seeOther(loginUrl(page, id));
  }
  const refused = await refusal(flow, { userId: user.id, username: user.username, authTime: dateOf(flow.inst.clock), locked: false });
  if (refused) return refused;
  const amr = [result.method, "mfa"];
  const { session, browserCookie } = await startSession(flow, user.id, amr);
  await recordAudit(inst.db, { ...actor, id: user.id }, {
    action: "user.signin",
    targetType: "session",
    targetId: session.id,
    clientId: authRequest.clientId,
    details: { amr, factorId: result.factorId },
  });
  await updateAuthRequest(inst.db, id, { sessionId: session.id, loginName: user.username, formError: null, formValues: null });
  return seeOther(`${CALLBACK_PATH}?id=${encodeURIComponent(id)}`, [browserCookie, deviceCookieAfterSignIn(inst.masterKey, inst.config.issuer, request, user.id)]);
});

/**
 * The options of a login page's passkey prompt, its challenge kept with the pending request (the
 * page that shows the prompt calls this; a new page replaces the previous challenge).
 */
export async function loginPasskeyPrompt(inst: Engine, authRequestId: string, userId?: string): Promise<string> {
  const options = await passkeyPrompt(inst, userId);
  await updateAuthRequest(inst.db, authRequestId, { webauthnChallenge: options.challenge });
  return JSON.stringify(options);
}
