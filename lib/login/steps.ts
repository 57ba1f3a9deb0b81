import type { Settings } from "@/lib/store/settings";
import { accountPolicyOf } from "./account-policy";
import { nextStep, type Interaction, type PolicyAccount, type PolicyConsent, type PolicyInput, type PolicyRequest, type Step } from "@/lib/login/signin-policy";
import type { Client } from "@/lib/store/clients";
import type { AuthRequest } from "@/lib/store/auth-requests";
import type { Store } from "@/lib/store/repositories";
import type { SessionWithUser } from "@/lib/store/sessions";
import { LOGIN_PATHS, loginUrl } from "./paths";
import { askedConsent } from "./consent-set";

/**
 * Glue between the stored flow and the pure sign-in policy (lib/login/signin-policy.ts): it
 * loads what the policy reads and turns the policy's interactions into login pages.
 */

/** A live session as the policy sees it. */
export type SessionAccount = SessionWithUser & PolicyAccount;

export function asAccount(s: SessionWithUser): SessionAccount {
  return {
    ...s,
    username: s.user.username,
    locked: s.user.locked,
    emailUnverified: !!s.user.email && !s.user.emailVerified,
    hasSecondFactor: s.user.hasSecondFactor,
    passwordChangedAt: s.user.passwordChangedAt,
    passwordChangeRequiredSince: s.user.passwordChangeRequiredSince,
  };
}

export function policyRequestOf(r: Pick<AuthRequest, "prompt" | "maxAge" | "loginHint" | "hintSubject" | "claims" | "acrValues" | "createdAt">): PolicyRequest {
  return {
    prompt: r.prompt as PolicyRequest["prompt"],
    maxAge: r.maxAge,
    loginHint: r.loginHint,
    hintSubject: r.hintSubject,
    subjects: r.claims?.subjects ?? null,
    acrValues: r.acrValues,
    essentialAcr: r.claims?.acr ?? null,
    createdAt: r.createdAt,
  };
}

/** What the consent prompt needs from a request and its client. */
export type ConsentRequest = { client: Pick<Client, "id" | "firstParty">; scopes: readonly string[]; resources: readonly string[]; denied: boolean };

/** What the consent prompt needs from a pending request and its client. */
export function consentRequestOf(r: Pick<AuthRequest, "scopes" | "resources" | "consentDenied">, client: Pick<Client, "id" | "firstParty">): ConsentRequest {
  return { client, scopes: r.scopes, resources: r.resources, denied: r.consentDenied };
}

/**
 * The policy's input for a request of a user agent: its live sessions, the id_token_hint's user,
 * and the session chosen during the request (when it is still live).
 */
export async function loadPolicyInput(
  store: Pick<Store, "sessions" | "users" | "consents" | "apis"> & { settings: { get(): Promise<Settings> } },
  opts: {
    request: PolicyRequest;
    userAgentId: string | null;
    /** The browser's live sessions at `now`, when the caller read them with the browser (browserOfRequest). */
    liveSessions?: readonly SessionWithUser[];
    chosenSessionId: string | null;
    primaryDomain: string;
    now: Date;
    /** The client and what the request asks of it: a third-party client's consent prompt reads it. */
    consent: ConsentRequest;
  },
): Promise<PolicyInput<SessionAccount>> {
  // A browser without a row has no sessions (its row is created only when something is stored).
  const live = opts.liveSessions ?? (opts.userAgentId ? await store.sessions.live(opts.userAgentId, opts.now) : []);
  const sessions = live.map(asAccount);
  const hint = opts.request.hintSubject ? await store.users.get(opts.request.hintSubject) : undefined;
  const settings = await store.settings.get();
  const policy = accountPolicyOf(settings);
  let consent: PolicyConsent | null = null;
  if (!opts.consent.client.firstParty) {
    const users = [...new Set(sessions.map((s) => s.userId))];
    const asked = askedConsent(opts.consent.scopes, opts.consent.resources, opts.consent.resources.length ? await store.apis.list() : []);
    consent = { asked, denied: opts.consent.denied, given: await store.consents.of(opts.consent.client.id, users) };
  }
  return {
    request: opts.request,
    consent,
    sessions,
    chosen: (opts.chosenSessionId && sessions.find((s) => s.id === opts.chosenSessionId)) || null,
    hintUser: hint ? { username: hint.username, locked: hint.locked } : null,
    primaryDomain: opts.primaryDomain,
    now: opts.now,
    requireVerifiedEmail: policy.emailVerification === "required",
    mfa: policy.mfa,
    passwordMaxAgeDays: settings.passwordPolicy.maxAgeDays ?? 0,
  };
}

const ACCOUNT_STEP_PAGES = {
  consent: LOGIN_PATHS.consent,
  verifyEmail: LOGIN_PATHS.verifyEmail,
  secondFactor: LOGIN_PATHS.secondFactor,
  enrolFactor: LOGIN_PATHS.enrolFactor,
  changePassword: LOGIN_PATHS.changePassword,
} as const;

/** What the flow remembers for an interaction's page, and that page. */
export function interactionPage(
  step: Interaction<PolicyAccount>,
  authRequestId: string,
): { location: string; patch: Partial<Pick<AuthRequest, "loginName" | "sessionId" | "formError" | "formValues">> } {
  const clear = { sessionId: null, formError: null, formValues: null };
  switch (step.step) {
    case "consent":
    case "verifyEmail":
    case "secondFactor":
    case "enrolFactor":
    case "changePassword":
      // The account is signed in: the page asks for its session's user.
      return {
        location: loginUrl(ACCOUNT_STEP_PAGES[step.step], authRequestId),
        patch: { formError: null, formValues: null, ...("id" in step.account && typeof step.account.id === "string" ? { sessionId: step.account.id } : {}) },
      };
    case "signIn":
      return {
        location: loginUrl(LOGIN_PATHS.loginName, authRequestId),
        patch: step.notice
          ? { ...clear, loginName: step.loginName, formError: step.notice.kind, formValues: { signedInAs: step.notice.signedInAs } }
          : { ...clear, loginName: step.loginName },
      };
    case "reauthenticate":
      return { location: loginUrl(LOGIN_PATHS.password, authRequestId), patch: { ...clear, loginName: step.account.username } };
    case "chooseAccount":
      return { location: loginUrl(LOGIN_PATHS.accounts, authRequestId), patch: { ...clear, loginName: null } };
    case "register":
      return { location: loginUrl(LOGIN_PATHS.register, authRequestId), patch: { ...clear, loginName: null } };
  }
}

/**
 * The policy's next step for a pending request with the session chosen during it: what the
 * callback, the consent and code pages and their forms all ask.
 */
export async function pendingStep(
  store: Parameters<typeof loadPolicyInput>[0],
  r: AuthRequest,
  client: Pick<Client, "id" | "firstParty">,
  primaryDomain: string,
  now: Date,
): Promise<Step<SessionAccount>> {
  return nextStep(
    await loadPolicyInput(store, {
      request: policyRequestOf(r),
      userAgentId: r.userAgentId,
      chosenSessionId: r.sessionId,
      primaryDomain,
      now,
      consent: consentRequestOf(r, client),
    }),
  );
}
