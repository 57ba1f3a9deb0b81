import { dateOf } from "@/lib/clock";
import { hasNul } from "@/lib/http/text-input";
import { BodyTooLarge, bodyTooLargeResponse, isFormEncoded, MAX_FORM_BYTES, readBodyText } from "@/lib/http/body";
import { addressForLimits, clientAddress } from "@/lib/http/client-address";
import { seeOther } from "@/lib/http/responses";
import type { Engine } from "@/lib/engine";
import { ACCOUNT_STEPS, nextStep, offersRegistration, type PolicyAccount } from "@/lib/login/signin-policy";
import { sameOrigin, verifyCsrf } from "@/lib/session/csrf";
import { userAgentCookie, userAgentOfRequest } from "@/lib/session/user-agent";
import { recordAudit, type Actor } from "@/lib/store/audit";
import { findPendingAuthRequest, updateAuthRequest, type AuthRequest } from "@/lib/store/auth-requests";
import { grantConsent } from "@/lib/store/consents";
import { askedConsent } from "./consent-set";
import { liveSessions, recordAuthentication, renewUserAgentCookie, type Session } from "@/lib/store/sessions";
import { hitRateLimit } from "@/lib/store/rate-limit";
import { getSettings, type Settings } from "@/lib/store/settings";
import { deviceCookieAfterSignIn, trustedUsers } from "./device-cookie";
import { checkPassword } from "./password";
import { completePasswordReset, requestPasswordReset } from "./password-reset";
import { changeDuePassword } from "./password-change";
import { accountPolicyOf } from "./account-policy";
import { notifyOwner } from "./owner-notices";
import { confirmEmailCode, confirmEmailLink, sendEmailVerification } from "./email-verification";
import { CALLBACK_PATH, LOGIN_PATHS, loginUrl } from "./paths";
import { registerUser, validateRegistration } from "./register";
import { asAccount, consentRequestOf, interactionPage, loadPolicyInput, pendingStep, policyRequestOf, type SessionAccount } from "./steps";
import type { HttpRequest } from "@/lib/http/request";

export type Flow = {
  request: HttpRequest;
  inst: Engine;
  settings: Settings;
  uaId: string;
  id: string;
  authRequest: AuthRequest;
  form: URLSearchParams;
  actor: Actor;
};

/**
 * The common gate of every login form: same origin, a known user agent, a pending request of
 * that user agent, and the form's CSRF token. Anything else ends on the error page.
 */
async function openFlow(inst: Engine, request: HttpRequest): Promise<Flow | Response> {
  const settings = await getSettings(inst);
  if (request.method !== "POST" || !isFormEncoded(request)) return seeOther(`${LOGIN_PATHS.error}?code=badRequest`);
  const form = new URLSearchParams(await readBodyText(request, MAX_FORM_BYTES));
  // PostgreSQL cannot store a NUL (lib/http/text-input.ts): such a form is malformed.
  for (const [name, value] of form) if (hasNul(name) || hasNul(value)) return seeOther(`${LOGIN_PATHS.error}?code=badRequest`);
  const id = form.get("authRequest") ?? "";
  const ua = await userAgentOfRequest(inst.store, inst.config.issuer, request);
  const authRequest = ua ? await findPendingAuthRequest(inst.db, id, ua.id, dateOf(inst.clock)) : undefined;
  if (!ua || !authRequest) return seeOther(`${LOGIN_PATHS.error}?code=expired`);
  if (!sameOrigin(request, inst.config.issuer) || !verifyCsrf(inst.masterKey, ua.id, id, form.get("csrf"))) {
    return seeOther(`${LOGIN_PATHS.error}?code=csrf`);
  }
  const actor: Actor = { type: "user", ip: clientAddress(request), userAgent: request.headers.get("user-agent") };
  return { request, inst, settings, uaId: ua.id, id, authRequest, form, actor };
}

export function guarded(fn: (flow: Flow) => Promise<Response>) {
  return async (inst: Engine, request: HttpRequest): Promise<Response> => {
    try {
      const flow = await openFlow(inst, request);
      return flow instanceof Response ? flow : await fn(flow);
    } catch (err) {
      if (err instanceof BodyTooLarge) return bodyTooLargeResponse();
      inst.log.error({ err }, "login step failed");
      return seeOther(`${LOGIN_PATHS.error}?code=serverError`);
    }
  };
}

/** Step 1: the login name. Never looked up here, so the next step looks the same for every name. */
export const handleSubmitLoginName = guarded(async ({ inst, id, form }) => {
  const loginName = (form.get("loginName") ?? "").trim();
  if (!loginName || loginName.length > 320) {
    await updateAuthRequest(inst.db, id, { formError: "loginNameRequired", formValues: null });
    return seeOther(loginUrl(LOGIN_PATHS.loginName, id));
  }
  await updateAuthRequest(inst.db, id, { loginName, formError: null, formValues: null });
  return seeOther(loginUrl(LOGIN_PATHS.password, id));
});

/**
 * Step 2: the password, under the lockout policy (lib/login/lockout.ts); success starts (or
 * refreshes) a session and marks this browser as one that signed in to the account (device cookie).
 */
export const handleSubmitPassword = guarded(async (flow) => {
  const { request, inst, settings, id, authRequest, form, actor } = flow;
  const loginName = authRequest.loginName;
  if (!loginName) return seeOther(loginUrl(LOGIN_PATHS.loginName, id));
  const result = await checkPassword(inst.db, {
    loginName,
    password: form.get("password") ?? "",
    address: actor.ip ?? "unknown",
    policy: settings.lockoutPolicy,
    primaryDomain: settings.primaryDomain,
    trustedUserIds: trustedUsers(inst.masterKey, inst.config.issuer, request),
    now: dateOf(inst.clock),
    memo: inst.memo,
  });
  if (!result.ok) {
    await recordAudit(inst.db, actor, {
      action: "user.signin.failed",
      targetType: "login_name",
      targetId: loginName.slice(0, 320),
      clientId: authRequest.clientId,
      details: { reason: result.reason },
    });
    if (result.reason === "invalid" && result.lockedUser) {
      // The owner hears of it by mail (lib/login/owner-notices.ts).
      await recordAudit(inst.db, actor, {
        action: "user.lockout",
        targetType: "user",
        targetId: result.lockedUser.id,
        clientId: authRequest.clientId,
        details: { lockedUntil: result.lockedUser.until.toISOString(), failures: settings.lockoutPolicy.lockAfterFailures },
      });
      const minutes = Math.max(1, Math.ceil((result.lockedUser.until.getTime() - inst.clock.now()) / 60_000));
      await notifyOwner(inst, result.lockedUser.id, "accountLocked", actor, { minutes });
    }
    const wait = "retryAfterSeconds" in result ? { retrySeconds: String(result.retryAfterSeconds) } : null;
    await updateAuthRequest(inst.db, id, { formError: result.reason, formValues: wait });
    return seeOther(loginUrl(LOGIN_PATHS.password, id));
  }
  // Ask the policy whether this sign-in can finish the request before it starts a session: a user
  // other than the one an id_token_hint names gets no session here and is asked for that user.
  const refused = await refusal(flow, { userId: result.user.id, username: result.user.username, authTime: dateOf(inst.clock), locked: result.user.locked });
  if (refused) return refused;
  const { session, browserCookie } = await startSession(flow, result.user.id, ["pwd"]);
  await recordAudit(inst.db, { ...actor, id: result.user.id }, {
    action: "user.signin",
    targetType: "session",
    targetId: session.id,
    clientId: authRequest.clientId,
    details: { amr: ["pwd"] },
  });
  await updateAuthRequest(inst.db, id, { sessionId: session.id, formError: null, formValues: null });
  // The device cookie exempts a browser from the account's lock: when the policy asks for the
  // user's second factor next, it is earned only once that is through too (lib/login/factor-handlers.ts).
  const client = await inst.store.clients.get(authRequest.clientId);
  const next = client ? await pendingStep(inst.store, { ...authRequest, sessionId: session.id }, client, settings.primaryDomain, dateOf(inst.clock)) : null;
  const trusted = next?.step === "secondFactor" ? [] : [deviceCookieAfterSignIn(inst.masterKey, inst.config.issuer, request, result.user.id)];
  return seeOther(`${CALLBACK_PATH}?id=${encodeURIComponent(id)}`, [browserCookie, ...trusted]);
});

/**
 * The session of a successful sign-in (new, or the user's live one in this browser refreshed),
 * and the browser's cookie renewed in the same transaction: the value sent until now names
 * nothing any more. OWASP's "renew the session ID after any privilege level change": a value
 * someone read or planted in this browser before the sign-in (a shared computer; a cookie set
 * from elsewhere over plain http, where the `__Host-` prefix cannot be used) must not carry the
 * session that follows. `browserCookie` is the Set-Cookie header with the new value.
 */
export async function startSession(flow: Flow, userId: string, amr: string[]): Promise<{ session: Session; browserCookie: string }> {
  const { inst, settings, uaId, actor } = flow;
  return inst.db.transaction(async (tx) => {
    const cookie = await renewUserAgentCookie(tx, uaId);
    const session = await recordAuthentication(tx, { userAgentId: uaId, userId, amr, lifetimes: settings.lifetimes, now: dateOf(inst.clock), from: actor });
    return { session, browserCookie: userAgentCookie(inst.config.issuer, cookie) };
  });
}

/** The callback, which asks the policy again and completes the request or shows its next page. */
export function toCallback(id: string): Response {
  return seeOther(`${CALLBACK_PATH}?id=${encodeURIComponent(id)}`);
}

/**
 * The gate of a page of the policy's account or consent steps (`ACCOUNT_STEPS`): the account the
 * policy asks `want` of for this request, or, when it asks something else now (the step is done,
 * the session is gone), the callback, which asks it again. So a form acts only while its step is
 * the one due.
 */
export async function accountStep(flow: Flow, want: (typeof ACCOUNT_STEPS)[number]): Promise<SessionAccount | Response> {
  const client = await flow.inst.store.clients.get(flow.authRequest.clientId);
  if (!client) return toCallback(flow.id);
  const step = await pendingStep(flow.inst.store, flow.authRequest, client, flow.settings.primaryDomain, dateOf(flow.inst.clock));
  return step.step === want && "account" in step ? step.account : toCallback(flow.id);
}

/**
 * The policy's answer for an account signed in or picked on a login page: null when it finishes
 * the request or ends it with an error for the client (the callback then completes or answers
 * it), else the page the flow continues on.
 */
export async function refusal(flow: Flow, account: PolicyAccount): Promise<Response | null> {
  const { inst, settings, uaId, id, authRequest } = flow;
  const client = await inst.store.clients.get(authRequest.clientId);
  if (!client) return null; // the callback answers that the client is gone
  const input = await loadPolicyInput(inst.store, {
    request: policyRequestOf(authRequest),
    userAgentId: uaId,
    chosenSessionId: null,
    primaryDomain: settings.primaryDomain,
    now: dateOf(inst.clock),
    consent: consentRequestOf(authRequest, client),
  });
  const step = nextStep<PolicyAccount>({ ...input, chosen: account });
  // An error for the client (the account can never satisfy this request, e.g. a claims request
  // for another `sub`): the authentication itself stands, and the callback, asking the policy
  // with this session, answers the client with the error in its response mode. The consent
  // screen comes after the session exists: the callback sends the browser there.
  if (step.step === "finish" || step.step === "error" || ACCOUNT_STEPS.includes(step.step)) return null;
  const next = interactionPage(step, id);
  await updateAuthRequest(inst.db, id, next.patch);
  return seeOther(next.location);
}

/** The account chooser: a live session of this browser, if the policy lets it finish the request. */
export const handleSubmitAccount = guarded(async (flow) => {
  const { inst, uaId, id, form } = flow;
  const session = (await liveSessions(inst.db, uaId, dateOf(inst.clock))).find((s) => s.id === form.get("sessionId"));
  if (!session) {
    await updateAuthRequest(inst.db, id, { formError: "sessionGone", formValues: null });
    return seeOther(loginUrl(LOGIN_PATHS.accounts, id));
  }
  const refused = await refusal(flow, asAccount(session));
  if (refused) return refused;
  await updateAuthRequest(inst.db, id, { sessionId: session.id, formError: null, formValues: null });
  return toCallback(id);
});

/**
 * Self-registration, rate-limited per address. A new account and a taken username or email end
 * on the same neutral page that sends the person on to sign in (user enumeration): the new user
 * signs in with the password just chosen, and nobody learns that a name exists.
 */
export const handleSubmitRegister = guarded(async ({ inst, settings, id, authRequest, form, actor }) => {
  // A new account can never be the user an id_token_hint names.
  if (!offersRegistration(authRequest)) return seeOther(loginUrl(LOGIN_PATHS.loginName, id));
  // Switched off: nothing is created; the register page says so.
  if (!settings.accountPolicy.registration) return seeOther(loginUrl(LOGIN_PATHS.register, id));
  const field = (name: string) => (form.get(name) ?? "").trim();
  const input = {
    username: field("username"),
    email: field("email"),
    givenName: field("givenName"),
    familyName: field("familyName"),
    password: form.get("password") ?? "",
    passwordConfirmation: form.get("passwordConfirmation") ?? "",
  };
  const values: Record<string, string> = { username: input.username, email: input.email, givenName: input.givenName, familyName: input.familyName };
  const names = accountPolicyOf(settings).registrationNames;
  const errors = validateRegistration(input, settings.passwordPolicy, names);
  if (!errors.length) {
    const limit = settings.rateLimits.registrationPerHour;
    const hit = await hitRateLimit(inst.db, `register:addr:${addressForLimits(actor.ip ?? "unknown")}`, limit, 3600, dateOf(inst.clock));
    if (!hit.allowed) {
      await updateAuthRequest(inst.db, id, { formError: "registerThrottled", formValues: values });
      return seeOther(loginUrl(LOGIN_PATHS.register, id));
    }
  }
  const result = await registerUser(inst.db, input, settings.passwordPolicy, names);
  if (!result.ok) {
    for (const e of result.errors) values[`error.${e.field}`] = [e.key, ...(e.violations ?? [])].join(",");
    await updateAuthRequest(inst.db, id, { formError: "register", formValues: values });
    return seeOther(loginUrl(LOGIN_PATHS.register, id));
  }
  // Both outcomes cost one password hash above; what differs (the audit event and a mail to the new
  // user or to the owners) happens after the answer (lib/background.ts), so that the answer takes
  // as long whether or not the name or address was taken.
  inst.background.run("registration mail", async () => {
    if ("created" in result) {
      await recordAudit(inst.db, { ...actor, id: result.created.id }, {
        action: "user.registered",
        targetType: "user",
        targetId: result.created.id,
        clientId: authRequest.clientId,
        details: { username: result.created.username },
      });
      // The address is verified by the code mailed now (unless the policy is off).
      await sendEmailVerification(inst, result.created, { ...actor, id: result.created.id }, authRequest.locale);
    } else {
      // The owners hear of it by mail; the person registering sees the same page as for a new account.
      await recordAudit(inst.db, actor, {
        action: "user.registration.duplicate",
        targetType: "user",
        targetId: result.taken.userIds[0] ?? null,
        clientId: authRequest.clientId,
        details: { matched: result.taken.matched, userIds: result.taken.userIds },
      });
      for (const userId of result.taken.userIds) await notifyOwner(inst, userId, "registrationAttempt", actor);
    }
  });
  await updateAuthRequest(inst.db, id, { loginName: input.username, formError: null, formValues: null });
  return seeOther(loginUrl(LOGIN_PATHS.registered, id));
});

/**
 * The consent screen's answer. Only while the policy asks for consent for this request's
 * account: then Allow records the consent (the scopes and APIs of the request, added to any given before)
 * and Deny marks the request refused; either way the callback, asking the policy again, finishes
 * the request or answers the client `access_denied`.
 */
export const handleSubmitConsent = guarded(async (flow) => {
  const { inst, id, authRequest, form, actor } = flow;
  const account = await accountStep(flow, "consent");
  if (account instanceof Response) return account;
  const decision = form.get("decision");
  if (decision !== "allow" && decision !== "deny") return seeOther(loginUrl(LOGIN_PATHS.consent, id));
  const userId = account.userId;
  const clientId = authRequest.clientId;
  const allowed = askedConsent(authRequest.scopes, authRequest.resources, await inst.store.apis.list());
  await inst.db.transaction(async (tx) => {
    if (decision === "allow") await grantConsent(tx, userId, clientId, allowed, dateOf(inst.clock));
    else await updateAuthRequest(tx, id, { consentDenied: true });
    await recordAudit(tx, { ...actor, id: userId }, {
      action: decision === "allow" ? "consent.granted" : "consent.denied",
      targetType: "user",
      targetId: userId,
      clientId,
      details: { scopes: [...allowed.scopes], apis: allowed.apis },
    });
  });
  return toCallback(id);
});

/**
 * "Forgot password?": the login name or email address. Whatever it names, the next page is the
 * same (no user enumeration); a mail goes out only for an account that has an address, within the
 * rate limits (lib/login/password-reset.ts).
 */
export const handleSubmitForgot = guarded(async ({ inst, id, form, actor, authRequest }) => {
  const value = (form.get("loginName") ?? "").trim();
  if (!value || value.length > 320) {
    await updateAuthRequest(inst.db, id, { formError: "loginNameRequired", formValues: null });
    return seeOther(loginUrl(LOGIN_PATHS.forgot, id));
  }
  // Looked up and mailed after the answer (lib/background.ts), so that the answer takes as long
  // whether or not an account matches.
  inst.background.run("password reset request", () => requestPasswordReset(inst, value, { ...actor, ip: actor.ip ?? null }, authRequest.locale));
  await updateAuthRequest(inst.db, id, { formError: null, formValues: null });
  return seeOther(loginUrl(LOGIN_PATHS.forgotSent, id));
});

/**
 * The new password from a reset link (a token form, see `tokenForm`). Failures go back to the
 * link's page with a reason, success to a page that tells the user to sign in again (every
 * session ended).
 */
export const handleSubmitReset = tokenForm("password reset", async (inst, form, actor) => {
  const token = form.get("token") ?? "";
  const outcome = await completePasswordReset(inst, token, form.get("password") ?? "", form.get("confirm") ?? "", actor);
  if (outcome.ok) return seeOther(LOGIN_PATHS.resetDone);
  const reason = outcome.reason === "policy" ? `policy&violations=${outcome.violations.join(",")}` : outcome.reason;
  return seeOther(`${LOGIN_PATHS.reset}?token=${encodeURIComponent(token)}&error=${reason}`);
});

/**
 * The code page of a sign-in that needs a verified address (the policy's `verifyEmail` step): the
 * code from the mail, or "send a new code". Once verified, the callback asks the policy again.
 */
export const handleSubmitVerifyEmail = guarded(async (flow) => {
  const { inst, id, authRequest, form, actor } = flow;
  const account = await accountStep(flow, "verifyEmail");
  if (account instanceof Response) return account;
  const user = await inst.store.users.get(account.userId);
  if (!user) return toCallback(id);
  const who: Actor = { ...actor, id: user.id };
  if (form.get("action") === "resend") {
    const sent = await sendEmailVerification(inst, user, who, authRequest.locale);
    await updateAuthRequest(inst.db, id, { formError: sent ? "codeSent" : "resendLimited", formValues: null });
    return seeOther(loginUrl(LOGIN_PATHS.verifyEmail, id));
  }
  if (await confirmEmailCode(inst, user.id, (form.get("code") ?? "").replace(/\s/g, ""), who)) {
    await updateAuthRequest(inst.db, id, { formError: null, formValues: null });
    return toCallback(id);
  }
  await updateAuthRequest(inst.db, id, { formError: "wrongCode", formValues: null });
  return seeOther(loginUrl(LOGIN_PATHS.verifyEmail, id));
});

/**
 * The policy's `changePassword` step: the password just proven is due for a change (an
 * administrator requires it, or it is older than the settings allow). The new password, twice;
 * a refusal comes back to the page with its reason, success goes on to the callback.
 */
export const handleSubmitChangePassword = guarded(async (flow) => {
  const { inst, settings, id, authRequest, form, actor } = flow;
  const account = await accountStep(flow, "changePassword");
  if (account instanceof Response) return account;
  const outcome = await changeDuePassword(inst, {
    account,
    password: form.get("password") ?? "",
    confirm: form.get("confirm") ?? "",
    passwordPolicy: settings.passwordPolicy,
    authRequestId: id,
    clientId: authRequest.clientId,
    actor,
  });
  if (outcome.ok) return toCallback(id);
  const formValues = outcome.reason === "policy" ? { violations: outcome.violations.join(",") } : null;
  await updateAuthRequest(inst.db, id, { formError: outcome.reason, formValues });
  return seeOther(loginUrl(LOGIN_PATHS.changePassword, id));
});

/**
 * The mail's "confirm my address" link: its page posts the token back (a GET never changes
 * anything, so a mail scanner following the link verifies nothing); a token form.
 */
export const handleSubmitVerifyLink = tokenForm("email verification", async (inst, form, actor) => {
  const user = await confirmEmailLink(inst, form.get("token") ?? "", actor);
  return seeOther(`${LOGIN_PATHS.verifyLink}?result=${user ? "verified" : "invalid"}`);
});

/**
 * The gate of a form that carries a mailed link's token instead of a flow: a form-encoded POST
 * without NULs from our own origin. The token is the credential, and a form carrying it can only
 * come from someone who has the link, so it serves as the CSRF token.
 */
function tokenForm(what: string, fn: (inst: Engine, form: URLSearchParams, actor: Actor) => Promise<Response>) {
  return async (inst: Engine, request: HttpRequest): Promise<Response> => {
    try {
      if (request.method !== "POST" || !isFormEncoded(request)) return seeOther(`${LOGIN_PATHS.error}?code=badRequest`);
      const form = new URLSearchParams(await readBodyText(request, MAX_FORM_BYTES));
      for (const [name, value] of form) if (hasNul(name) || hasNul(value)) return seeOther(`${LOGIN_PATHS.error}?code=badRequest`);
      if (!sameOrigin(request, inst.config.issuer)) return seeOther(`${LOGIN_PATHS.error}?code=csrf`);
      return await fn(inst, form, { type: "user", ip: clientAddress(request), userAgent: request.headers.get("user-agent") });
    } catch (err) {
      if (err instanceof BodyTooLarge) return bodyTooLargeResponse();
      inst.log.error({ err }, `${what} failed`);
      return seeOther(`${LOGIN_PATHS.error}?code=serverError`);
    }
  };
}
