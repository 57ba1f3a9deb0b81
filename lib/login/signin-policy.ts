/**
 * # The sign-in policy
 *
 * The one place that decides what the browser sees during an authorization request: finish for a
 * session, show the login name page (possibly prefilled), ask a known user for their password
 * again, show the account chooser or the registration, or answer the client with an error. The
 * authorization endpoint (`handleAuthorize`), its callback (`handleAuthorizeCallback`), every login
 * form handler (`lib/login/handlers.ts`) and the account chooser page ask `nextStep`; none of them
 * decides on its own. The module is pure: no database, no HTTP, no framework; the callers load the
 * sessions and users and act on the answer (`lib/login/steps.ts` maps a step to a page).
 *
 * ## Inputs
 *
 * - the request: `prompt`, `max_age`, `login_hint`, the subject of a verified `id_token_hint`
 *   and when the request was created;
 * - `chosen`: the account signed in or picked on a login page during this request (null on the
 *   first pass at the authorization endpoint). The password form asks with the account it has
 *   just authenticated before it starts a session, so a refused user gets no session; the
 *   callback asks again with the stored session before it issues anything;
 * - the browser's live sessions with their users' state (a locked user's session never counts);
 * - the user the `id_token_hint` names, if it still exists, and the time.
 *
 * ## How it decides
 *
 * Modelled on node-oidc-provider's interaction policy: a prompt is a list of named checks, run in
 * order. Each check either passes or names the interaction it needs. The first check that needs
 * one wins; with `prompt=none` that need becomes the check's error for the client instead
 * (`login_required`, `account_selection_required`). When every check passes, the request finishes
 * for the account the checks agreed on. Today there is one prompt, `login`, with these checks:
 *
 * 1. `hint_user_unavailable`: the `id_token_hint` names a user who no longer exists or is locked:
 *    nobody can ever satisfy the request, so the client gets `login_required`.
 * 2. `chosen_locked`: the account chosen during the request belongs to a user locked since: sign
 *    in again (never another session instead of the one the user picked).
 * 3. `claims_sub`: the account chosen during the request is not a user a `claims` request for a
 *    specific `sub` allows (OIDC Core 5.5.1): `login_required` for the client, no code. Only
 *    such users' sessions are candidates at all.
 * 4. `prompt_create`: `prompt=create` shows the registration (not when an `id_token_hint` names
 *    an existing user: a new account can never be that user).
 * 5. `id_token_hint`: the account chosen during the request is not the user the hint names
 *    (OIDC Core 3.1.2.1: never issue for another user): sign in again as the hinted user, with a
 *    notice that says so. Never a code for the other user.
 * 6. `prompt_login`: `prompt=login` needs a sign-in made during this request.
 * 7. `prompt_select_account`: `prompt=select_account` needs an account picked during this
 *    request (the chooser; the login page when there is nothing to choose from).
 * 8. `no_session`: no session fits the request (none at all, or none for the hinted user or
 *    login hint): sign in, prefilled with the hinted user's name or the login hint.
 * 9. `account_selection`: several sessions and nothing says which one: the chooser.
 * 10. `max_age`: the account's sign-in is older than `max_age` seconds: its password again. A
 *    sign-in made during this request satisfies any `max_age` (also `max_age=0`); times are
 *    compared in whole seconds, as `auth_time` is (OIDC Core 2).
 *
 * A sign-in "made during this request" means the session's auth time is not before the
 * request's creation (both in whole seconds): only a successful authentication moves it.
 *
 * ## Account
 *
 * Then the `account` prompt: what the account itself must complete, in this order. Its steps come
 * once the session exists (`ACCOUNT_STEPS`); with `prompt=none` each is `interaction_required`.
 *
 * 1. `second_factor` (settings `mfa`, input `mfa`; `off` never asks): the account's session has
 *    no second factor in its `amr` (RFC 8176 `mfa`) while the user has one enrolled, or the
 *    instance requires one (`mfa: required`), or the request's preferred `acr_values` class is
 *    multi-factor, or an essential `acr` claim asks for it. A user with a factor is asked for it (`secondFactor`); one without enrols one
 *    now (`enrolFactor`).
 * 2. `password_expired`: the session was signed in with the password (`pwd` in its `amr`) at or
 *    after the moment that password became due: an administrator's "must change the password"
 *    (`passwordChangeRequiredSince`), or its age reaching the settings' `passwordPolicy.maxAgeDays`
 *    (`passwordChangedAt` + that many days). The user chooses a new one (`changePassword`, the
 *    current one having just been proven), as Keycloak's "Update Password" required action does.
 *    A session signed in before that moment is left alone (single sign-on and `prompt=none` go on
 *    as before; its next password sign-in asks), and a passkey sign-in without a password never
 *    asks. A session that left the page without a new password is asked again by every request.
 * 3. `email_unverified`, when the instance requires verified addresses (settings
 *    `emailVerification: required`) and the account's address is not verified: the code page
 *    (`verifyEmail`). A user without an address has nothing to verify.
 *
 * Before them, `essential_acr_unmet`: an essential `acr` claim that only the multi-factor class
 * meets, for a session without a second factor, when second factors are off or the request is
 * `prompt=none`: `unmet_authentication_requirements` (OIDC Core errata).
 *
 * ## Consent
 *
 * Once the login prompt has agreed on an account, the `consent` prompt runs for a third-party
 * client (`input.consent`; first-party clients, the default, have none and never ask):
 *
 * 1. `consent_denied`: the user refused the consent screen during this request: `access_denied`.
 * 2. `prompt_consent`: `prompt=consent` needs a consent given during this request.
 * 3. `scopes_not_consented`: a requested scope, API (resource) or API scope the user never
 *    allowed this client: ask.
 *
 * With `prompt=none` the need becomes `consent_required`. What the user allowed is remembered
 * per user and client as the union of the scopes and of each API's scopes
 * (lib/login/consent-set.ts, lib/store/consents.ts).
 *
 * ## Adding a step
 *
 * A new check goes into the prompt it belongs to (`LOGIN_PROMPT`: who signs in; `ACCOUNT_PROMPT`:
 * what the signed-in account must complete; `CONSENT_PROMPT`), with a new member of `Interaction`
 * (and of `ACCOUNT_STEPS` when its session exists already), its page in `lib/login/steps.ts`, its
 * rows in `test/signin-policy.test.ts` and this list. The inputs grow with the state the check
 * reads (e.g. the user's enrolled factors).
 */
import type { MfaPolicy } from "@/db/schema";
import { ACR, asksForMultiFactor, type Prompt } from "@/lib/protocol/vocabulary";
import { coversConsent, type ConsentSet } from "./consent-set";

/** An account the browser holds a session for (or has just authenticated). */
export type PolicyAccount = {
  userId: string;
  username: string;
  /** When the user last authenticated in this session. */
  authTime: Date;
  /** A locked user may not finish any request. */
  locked: boolean;
  /** The user has an email address that is not verified (the `email_unverified` check). */
  emailUnverified?: boolean;
  /** How the session's user authenticated (RFC 8176); `mfa` once a second factor was used. */
  amr?: readonly string[];
  /** The user has a second factor enrolled (the `second_factor` check). */
  hasSecondFactor?: boolean;
  /** When the user's password was last set; null or absent: no password (the `password_expired` check). */
  passwordChangedAt?: Date | null;
  /** Since when an administrator requires a new password; null or absent: not required. */
  passwordChangeRequiredSince?: Date | null;
};

export type PolicyRequest = {
  prompt: readonly Prompt[];
  /** Seconds, or null when the client sent no max_age. */
  maxAge: number | null;
  loginHint: string | null;
  /** `sub` of a verified id_token_hint. */
  hintSubject: string | null;
  /**
   * The only users a `claims` request for a specific `sub` allows (OIDC Core 5.5.1); null or
   * absent: anyone. Unlike an id_token_hint it never prefills the login page: a user id in a
   * request must not reveal that user's login name.
   */
  subjects?: readonly string[] | null;
  /** Authentication context classes the client asked for, preferred first. */
  acrValues?: readonly string[];
  /**
   * The classes of an essential `acr` claim (OIDC Core 5.5.1.1): one of them must be met, or the
   * request fails. Null or absent: nothing essential.
   */
  essentialAcr?: readonly string[] | null;
  createdAt: Date;
};

/** What the consent prompt reads; absent for a first-party client, which never asks. */
export type PolicyConsent = {
  /** What the request asks for: protocol scopes, and APIs with their scopes. */
  asked: ConsentSet;
  /** The user refused the consent screen during this request. */
  denied: boolean;
  /** What each user of the browser's sessions allowed this client before, by user id. */
  given: Readonly<Record<string, ConsentSet & { grantedAt: Date }>>;
};

export type PolicyInput<A extends PolicyAccount> = {
  request: PolicyRequest;
  consent?: PolicyConsent | null;
  /** The browser's live sessions. */
  sessions: readonly A[];
  /** The account signed in or picked on a login page during this request; null before any. */
  chosen: A | null;
  /** The user the id_token_hint names, when there is a hint and that user exists. */
  hintUser: { username: string; locked: boolean } | null;
  /** Login hints may name a user as `username@primaryDomain`. */
  primaryDomain: string;
  now: Date;
  /** The instance requires a verified email address before a sign-in completes. */
  requireVerifiedEmail?: boolean;
  /** The instance's second-factor policy; absent is `off`. */
  mfa?: MfaPolicy;
  /** Days a password may be used (settings `passwordPolicy.maxAgeDays`); 0 or absent: no limit. */
  passwordMaxAgeDays?: number;
};

/** Error codes for the client (OIDC Core 3.1.2.6, RFC 6749 4.1.2.1). */
export type ClientErrorCode = "login_required" | "account_selection_required" | "consent_required" | "access_denied" | "interaction_required" | "unmet_authentication_requirements";

/** What the browser is shown next. */
export type Interaction<A extends PolicyAccount> =
  /** The login name page, prefilled when the request names someone; `notice` explains why. */
  | { step: "signIn"; loginName: string | null; notice: { kind: "wrongAccount"; signedInAs: string } | null }
  /** The password page of a known account (its sign-in is too old, or prompt=login). */
  | { step: "reauthenticate"; account: A }
  | { step: "chooseAccount" }
  | { step: "register" }
  /** The consent screen of a third-party client, for the account the request finishes for. */
  | { step: "consent"; account: A }
  /** The code mailed to the account's address, when the instance requires verified addresses. */
  | { step: "verifyEmail"; account: A }
  /** A code of the user's authenticator (or a recovery code) completes the sign-in. */
  | { step: "secondFactor"; account: A }
  /** The user has no second factor but the sign-in needs one: enrol one now. */
  | { step: "enrolFactor"; account: A }
  /** The password just proven is due for a change: choose a new one. */
  | { step: "changePassword"; account: A };

export type Step<A extends PolicyAccount> =
  | Interaction<A>
  | { step: "finish"; account: A }
  | { step: "error"; error: ClientErrorCode; description: string; reason: string };

/** What a check sees: the input plus what every check needs computed once. */
type Context<A extends PolicyAccount> = PolicyInput<A> & {
  /** Sessions that may finish a request: not of a locked user, of the hinted user if any. */
  candidates: A[];
  /** The account the request would finish for if every check passes. */
  account: A | null;
  /** The name the login page is prefilled with. */
  prefill: string | null;
};

type Check = {
  reason: string;
  /** What a prompt=none request gets when this check needs an interaction. */
  error: ClientErrorCode;
  description: string;
  need<A extends PolicyAccount>(ctx: Context<A>): Interaction<A> | { step: "error" } | null;
};

type PolicyPrompt = { name: string; checks: readonly Check[] };

const signIn = <A extends PolicyAccount>(ctx: Context<A>): Interaction<A> => ({ step: "signIn", loginName: ctx.prefill, notice: null });

const LOGIN_PROMPT: PolicyPrompt = {
  name: "login",
  checks: [
    {
      reason: "hint_user_unavailable",
      error: "login_required",
      description: "The user named by the id_token_hint cannot sign in.",
      need: (ctx) => (ctx.request.hintSubject && (!ctx.hintUser || ctx.hintUser.locked) ? { step: "error" } : null),
    },
    {
      reason: "chosen_locked",
      error: "login_required",
      description: "The chosen user can no longer sign in.",
      need: (ctx) => (ctx.chosen?.locked ? signIn(ctx) : null),
    },
    {
      reason: "claims_sub",
      error: "login_required",
      description: "The signed-in user is not the subject the request asked for.",
      need: (ctx) => (ctx.chosen && ctx.request.subjects && !ctx.request.subjects.includes(ctx.chosen.userId) ? { step: "error" } : null),
    },
    {
      reason: "prompt_create",
      error: "login_required",
      description: "The user must register.",
      need: (ctx) => (ctx.request.prompt.includes("create") && !ctx.chosen && !ctx.request.hintSubject ? { step: "register" } : null),
    },
    {
      reason: "id_token_hint",
      error: "login_required",
      description: "The user named by the id_token_hint must sign in.",
      need: (ctx) =>
        ctx.request.hintSubject && ctx.chosen && ctx.chosen.userId !== ctx.request.hintSubject
          ? { step: "signIn", loginName: ctx.prefill, notice: { kind: "wrongAccount", signedInAs: ctx.chosen.username } }
          : null,
    },
    {
      reason: "prompt_login",
      error: "login_required",
      description: "The user must sign in again (prompt=login).",
      need: (ctx) => {
        if (!ctx.request.prompt.includes("login")) return null;
        if (ctx.chosen) {
          return signedInDuringRequest(ctx.chosen, ctx.request) ? null : { step: "reauthenticate", account: ctx.chosen };
        }
        return signIn(ctx);
      },
    },
    {
      reason: "prompt_select_account",
      error: "account_selection_required",
      description: "The user must choose an account (prompt=select_account).",
      need: (ctx) => (ctx.request.prompt.includes("select_account") && !ctx.chosen ? (ctx.candidates.length ? { step: "chooseAccount" } : signIn(ctx)) : null),
    },
    {
      reason: "no_session",
      error: "login_required",
      description: "The user is not signed in.",
      need: (ctx) => {
        if (ctx.account) return null;
        const r = ctx.request;
        return !ctx.candidates.length || r.hintSubject || r.loginHint ? signIn(ctx) : null;
      },
    },
    {
      reason: "account_selection",
      error: "account_selection_required",
      description: "The user must choose an account.",
      need: (ctx) => (ctx.account ? null : { step: "chooseAccount" }),
    },
    {
      reason: "max_age",
      error: "login_required",
      description: "The user must authenticate again (max_age).",
      need: (ctx) => (ctx.account && !satisfiesMaxAge(ctx.account, ctx.request, ctx.now) ? { step: "reauthenticate", account: ctx.account } : null),
    },
  ],
};

/** What the account itself must complete before any request finishes for it. */
const ACCOUNT_PROMPT: PolicyPrompt = {
  name: "account",
  checks: [
    {
      reason: "essential_acr_unmet",
      error: "unmet_authentication_requirements",
      description: "The essential authentication context class (acr) cannot be met.",
      need: (ctx) => {
        const essential = ctx.request.essentialAcr;
        if (!ctx.account || !essential?.length || essential.includes(ACR.password) || ctx.account.amr?.includes("mfa")) return null;
        // Only the multi-factor class is left: second factors switched off never meet it, and
        // without the user (prompt=none) it cannot be met now; otherwise `second_factor` asks.
        const off = !ctx.mfa || ctx.mfa === "off";
        return off || ctx.request.prompt.includes("none") ? { step: "error" } : null;
      },
    },
    {
      reason: "second_factor",
      error: "interaction_required",
      description: "The user must complete a second factor.",
      need: (ctx) => {
        const account = ctx.account;
        if (!account || !ctx.mfa || ctx.mfa === "off" || account.amr?.includes("mfa")) return null;
        const needed = account.hasSecondFactor || ctx.mfa === "required" || asksForMultiFactor(ctx.request.acrValues) || essentialMultiFactor(ctx.request);
        if (!needed) return null;
        return account.hasSecondFactor ? { step: "secondFactor", account } : { step: "enrolFactor", account };
      },
    },
    {
      reason: "password_expired",
      error: "interaction_required",
      description: "The user must choose a new password.",
      need: (ctx) => (ctx.account && signedInWithDuePassword(ctx.account, ctx.passwordMaxAgeDays ?? 0) ? { step: "changePassword", account: ctx.account } : null),
    },
    {
      reason: "email_unverified",
      error: "interaction_required",
      description: "The user must verify their email address.",
      need: (ctx) => (ctx.requireVerifiedEmail && ctx.account?.emailUnverified ? { step: "verifyEmail", account: ctx.account } : null),
    },
  ],
};

/** When the account's user last allowed this client, if ever, and what. */
const consentOf = <A extends PolicyAccount>(ctx: Context<A>) => (ctx.account && ctx.consent ? ctx.consent.given[ctx.account.userId] : undefined);

const CONSENT_PROMPT: PolicyPrompt = {
  name: "consent",
  checks: [
    {
      reason: "consent_denied",
      error: "access_denied",
      description: "The user denied the request.",
      need: (ctx) => (ctx.consent?.denied ? { step: "error" } : null),
    },
    {
      reason: "prompt_consent",
      error: "consent_required",
      description: "The user must consent again (prompt=consent).",
      need: (ctx) => {
        if (!ctx.consent || !ctx.account || !ctx.request.prompt.includes("consent")) return null;
        const given = consentOf(ctx);
        // Milliseconds, not seconds as for auth_time: a consent from the previous request a
        // moment ago must not count for this one.
        return given && given.grantedAt.getTime() >= ctx.request.createdAt.getTime() ? null : { step: "consent", account: ctx.account };
      },
    },
    {
      reason: "scopes_not_consented",
      error: "consent_required",
      description: "The user has not consented to the requested scopes.",
      need: (ctx) => {
        if (!ctx.consent || !ctx.account) return null;
        return coversConsent(consentOf(ctx), ctx.consent.asked) ? null : { step: "consent", account: ctx.account };
      },
    },
  ],
};

/** The prompts in the order they are resolved: who signs in, then what they allow. */
const PROMPTS: readonly PolicyPrompt[] = [LOGIN_PROMPT, ACCOUNT_PROMPT, CONSENT_PROMPT];

/** The next step of an authorization request. */
export function nextStep<A extends PolicyAccount>(input: PolicyInput<A>): Step<A> {
  const ctx = contextOf(input);
  const silent = input.request.prompt.includes("none");
  for (const prompt of PROMPTS) {
    for (const check of prompt.checks) {
      const need = check.need(ctx);
      if (!need) continue;
      if (need.step === "error" || silent) return { step: "error", error: check.error, description: check.description, reason: check.reason };
      return need;
    }
  }
  // Every check passed, so `no_session` and `account_selection` found the account.
  return { step: "finish", account: ctx.account! };
}

/**
 * The accounts the chooser lists, the login hint's first, each with whether picking it finishes
 * the request (`ready`) or needs a sign-in first.
 */
export function chooserEntries<A extends PolicyAccount>(input: PolicyInput<A>): { account: A; hinted: boolean; ready: boolean }[] {
  const ctx = contextOf(input);
  const hinted = (a: A) => !!input.request.loginHint && hintMatches(input.request.loginHint, a.username, input.primaryDomain);
  return [...ctx.candidates]
    .sort((a, b) => Number(hinted(b)) - Number(hinted(a)))
    .map((account) => {
      // Ready: picking it needs no password (a second factor, the address's code or the consent
      // screen of a third-party client may follow).
      const next = nextStep({ ...input, chosen: account }).step;
      return { account, hinted: hinted(account), ready: next === "finish" || ACCOUNT_STEPS.includes(next) };
    });
}

/** The steps that continue a request for an account already signed in (its session exists). */
export const ACCOUNT_STEPS: readonly Step<PolicyAccount>["step"][] = ["consent", "verifyEmail", "secondFactor", "enrolFactor", "changePassword"];

/** Whether a new account could finish this request: not when an id_token_hint names a user. */
export function offersRegistration(request: Pick<PolicyRequest, "hintSubject">): boolean {
  return !request.hintSubject;
}

/** A login hint names a user by username or by username@primarydomain, case-insensitively. */
export function hintMatches(hint: string, username: string, primaryDomain: string): boolean {
  const h = hint.trim().toLowerCase();
  const u = username.toLowerCase();
  return h === u || h === `${u}@${primaryDomain.toLowerCase()}`;
}

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** The account authenticated after this request was created (whole seconds, as auth_time). */
function signedInDuringRequest(account: PolicyAccount, request: PolicyRequest): boolean {
  return seconds(account.authTime) >= seconds(request.createdAt);
}

/** OIDC Core 3.1.2.1: re-authenticate when more than max_age seconds passed since auth_time. */
function satisfiesMaxAge(account: PolicyAccount, request: PolicyRequest, now: Date): boolean {
  if (request.maxAge === null || signedInDuringRequest(account, request)) return true;
  return seconds(now) - seconds(account.authTime) <= request.maxAge;
}

const DAY_MS = 86_400_000;

/**
 * The session was signed in with a password that was already due for a change: required by an
 * administrator, or older than `maxAgeDays`, at its auth time (see `password_expired`).
 */
function signedInWithDuePassword(account: PolicyAccount, maxAgeDays: number): boolean {
  if (!account.amr?.includes("pwd")) return false;
  const due = [account.passwordChangeRequiredSince ?? null];
  if (maxAgeDays > 0 && account.passwordChangedAt) due.push(new Date(account.passwordChangedAt.getTime() + maxAgeDays * DAY_MS));
  return due.some((d) => d !== null && account.authTime.getTime() >= d.getTime());
}

function contextOf<A extends PolicyAccount>(input: PolicyInput<A>): Context<A> {
  const { request } = input;
  const chosen = input.chosen;
  let candidates = input.sessions.filter((s) => !s.locked);
  if (request.hintSubject) candidates = candidates.filter((s) => s.userId === request.hintSubject);
  if (request.subjects) candidates = candidates.filter((s) => request.subjects!.includes(s.userId));
  let account: A | null;
  if (chosen) account = chosen;
  else if (request.hintSubject) account = candidates[0] ?? null;
  else if (request.loginHint) account = candidates.find((s) => hintMatches(request.loginHint!, s.username, input.primaryDomain)) ?? null;
  else account = candidates.length === 1 ? candidates[0]! : null;
  return { ...input, chosen, candidates, account, prefill: input.hintUser?.username ?? request.loginHint };
}

/** An essential `acr` claim that only the multi-factor class meets. */
function essentialMultiFactor(request: PolicyRequest): boolean {
  const essential = request.essentialAcr;
  return !!essential?.length && !essential.includes(ACR.password);
}
