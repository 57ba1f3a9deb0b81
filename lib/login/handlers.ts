import { hasNul } from "@/lib/http/text-input";
import { BodyTooLarge, bodyTooLargeResponse, MAX_FORM_BYTES, readBodyText } from "@/lib/http/body";
import { clientAddress } from "@/lib/http/client-address";
import { seeOther } from "@/lib/http/responses";
import { instance, type Instance } from "@/lib/instance";
import { log } from "@/lib/log";
import { sessionSatisfies } from "@/lib/oauth/authorize";
import { isFormEncoded } from "@/lib/oauth/form";
import { sameOrigin, verifyCsrf } from "@/lib/session/csrf";
import { userAgentOfRequest } from "@/lib/session/user-agent";
import { recordAudit, type Actor } from "@/lib/store/audit";
import { findPendingAuthRequest, updateAuthRequest, type AuthRequest } from "@/lib/store/auth-requests";
import { getLiveSession, recordAuthentication } from "@/lib/store/sessions";
import { getSettings, type Settings } from "@/lib/store/settings";
import { checkPassword } from "./password";
import { CALLBACK_PATH, LOGIN_PATHS, loginUrl } from "./paths";
import { registerUser } from "./register";

type Flow = { inst: Instance; settings: Settings; uaId: string; id: string; authRequest: AuthRequest; form: URLSearchParams; actor: Actor };

/**
 * The common gate of every login form: same origin, a known user agent, a pending request of
 * that user agent, and the form's CSRF token. Anything else ends on the error page.
 */
async function openFlow(request: Request): Promise<Flow | Response> {
  const inst = await instance();
  const settings = await getSettings(inst.db);
  if (request.method !== "POST" || !isFormEncoded(request)) return seeOther(`${LOGIN_PATHS.error}?code=badRequest`);
  const form = new URLSearchParams(await readBodyText(request, MAX_FORM_BYTES));
  // PostgreSQL cannot store a NUL (lib/http/text-input.ts): such a form is malformed.
  for (const [name, value] of form) if (hasNul(name) || hasNul(value)) return seeOther(`${LOGIN_PATHS.error}?code=badRequest`);
  const id = form.get("authRequest") ?? "";
  const ua = await userAgentOfRequest(inst.db, inst.config.issuer, request);
  const authRequest = ua ? await findPendingAuthRequest(inst.db, id, ua.id) : undefined;
  if (!ua || !authRequest) return seeOther(`${LOGIN_PATHS.error}?code=expired`);
  if (!sameOrigin(request, inst.config.issuer) || !verifyCsrf(inst.masterKey, ua.id, id, form.get("csrf"))) {
    return seeOther(`${LOGIN_PATHS.error}?code=csrf`);
  }
  const actor: Actor = { type: "user", ip: clientAddress(request), userAgent: request.headers.get("user-agent") };
  return { inst, settings, uaId: ua.id, id, authRequest, form, actor };
}

function guarded(fn: (flow: Flow) => Promise<Response>) {
  return async (request: Request): Promise<Response> => {
    try {
      const flow = await openFlow(request);
      return flow instanceof Response ? flow : await fn(flow);
    } catch (err) {
      if (err instanceof BodyTooLarge) return bodyTooLargeResponse();
      log().error({ err }, "login step failed");
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

/** Step 2: the password, with the lockout policy; success starts (or refreshes) a session. */
export const handleSubmitPassword = guarded(async ({ inst, settings, uaId, id, authRequest, form, actor }) => {
  const loginName = authRequest.loginName;
  if (!loginName) return seeOther(loginUrl(LOGIN_PATHS.loginName, id));
  const result = await checkPassword(inst.db, {
    loginName,
    password: form.get("password") ?? "",
    address: actor.ip ?? "unknown",
    policy: settings.lockoutPolicy,
    primaryDomain: settings.primaryDomain,
  });
  if (!result.ok) {
    await recordAudit(inst.db, actor, {
      action: "user.signin.failed",
      targetType: "login_name",
      targetId: loginName.slice(0, 320),
      clientId: authRequest.clientId,
      details: { reason: result.reason },
    });
    const retryMinutes = result.reason === "lockedOut" ? String(Math.max(1, Math.ceil(result.retryAfterSeconds / 60))) : "";
    await updateAuthRequest(inst.db, id, { formError: result.reason, formValues: retryMinutes ? { retryMinutes } : null });
    return seeOther(loginUrl(LOGIN_PATHS.password, id));
  }
  const session = await recordAuthentication(inst.db, { userAgentId: uaId, userId: result.user.id, amr: ["pwd"], lifetimes: settings.lifetimes });
  await recordAudit(inst.db, { ...actor, id: result.user.id }, {
    action: "user.signin",
    targetType: "session",
    targetId: session.id,
    clientId: authRequest.clientId,
    details: { amr: ["pwd"] },
  });
  await updateAuthRequest(inst.db, id, { sessionId: session.id, formError: null, formValues: null });
  return seeOther(`${CALLBACK_PATH}?id=${encodeURIComponent(id)}`);
});

/** The account chooser: a live session of this browser, re-authenticated when the request demands it. */
export const handleSubmitAccount = guarded(async ({ inst, uaId, id, authRequest, form }) => {
  const session = await getLiveSession(inst.db, uaId, form.get("sessionId") ?? "");
  if (!session) {
    await updateAuthRequest(inst.db, id, { formError: "sessionGone", formValues: null });
    return seeOther(loginUrl(LOGIN_PATHS.accounts, id));
  }
  if (!sessionSatisfies(authRequest, session, new Date())) {
    await updateAuthRequest(inst.db, id, { loginName: session.user.username, formError: null, formValues: null });
    return seeOther(loginUrl(LOGIN_PATHS.password, id));
  }
  await updateAuthRequest(inst.db, id, { sessionId: session.id, formError: null, formValues: null });
  return seeOther(`${CALLBACK_PATH}?id=${encodeURIComponent(id)}`);
});

/** Self-registration: the new user is signed in at once. */
export const handleSubmitRegister = guarded(async ({ inst, settings, uaId, id, authRequest, form, actor }) => {
  const field = (name: string) => (form.get(name) ?? "").trim();
  const input = {
    username: field("username"),
    email: field("email"),
    givenName: field("givenName"),
    familyName: field("familyName"),
    password: form.get("password") ?? "",
    passwordConfirmation: form.get("passwordConfirmation") ?? "",
  };
  const result = await registerUser(inst.db, input, settings.passwordPolicy);
  if (!result.ok) {
    const values: Record<string, string> = { username: input.username, email: input.email, givenName: input.givenName, familyName: input.familyName };
    for (const e of result.errors) values[`error.${e.field}`] = [e.key, ...(e.violations ?? [])].join(",");
    await updateAuthRequest(inst.db, id, { formError: "register", formValues: values });
    return seeOther(loginUrl(LOGIN_PATHS.register, id));
  }
  const user = result.user;
  await recordAudit(inst.db, { ...actor, id: user.id }, {
    action: "user.registered",
    targetType: "user",
    targetId: user.id,
    clientId: authRequest.clientId,
    details: { username: user.username },
  });
  const session = await recordAuthentication(inst.db, { userAgentId: uaId, userId: user.id, amr: ["pwd"], lifetimes: settings.lifetimes });
  await recordAudit(inst.db, { ...actor, id: user.id }, {
    action: "user.signin",
    targetType: "session",
    targetId: session.id,
    clientId: authRequest.clientId,
    details: { amr: ["pwd"], registration: true },
  });
  await updateAuthRequest(inst.db, id, { sessionId: session.id, loginName: user.username, formError: null, formValues: null });
  return seeOther(`${CALLBACK_PATH}?id=${encodeURIComponent(id)}`);
});
