/** Where the hosted login lives; pages carry the pending request's id as `authRequest`. */
export const LOGIN_PATHS = {
  loginName: "/ui/login",
  password: "/ui/login/password",
  accounts: "/ui/login/accounts",
  register: "/ui/login/register",
  /** A third-party application asks for the user's consent. */
  consent: "/ui/login/consent",
  /** After a sign-up, the same page whether or not an account was created (no user enumeration). */
  registered: "/ui/login/registered",
  signedOut: "/ui/login/signedout",
  error: "/ui/login/error",
  submitLoginName: "/ui/login/submit/loginname",
  submitPassword: "/ui/login/submit/password",
  submitAccount: "/ui/login/submit/account",
  submitRegister: "/ui/login/submit/register",
  submitConsent: "/ui/login/submit/consent",
  /** "Forgot password?": asks for the login name or email address, then says a mail may be on its way. */
  forgot: "/ui/login/forgot",
  forgotSent: "/ui/login/forgot/sent",
  submitForgot: "/ui/login/submit/forgot",
  /** The mailed link: choose a new password. */
  reset: "/ui/login/reset",
  resetDone: "/ui/login/reset/done",
  submitReset: "/ui/login/submit/reset",
  /** Email verification: the code during sign-in, and the mailed link. */
  verifyEmail: "/ui/login/verify-email",
  submitVerifyEmail: "/ui/login/submit/verify-email",
  verifyLink: "/ui/login/verify",
  submitVerifyLink: "/ui/login/submit/verify",
  /** Second factors during sign-in: the code of an authenticator (or a recovery code), and enrolment. */
  secondFactor: "/ui/login/factor",
  submitSecondFactor: "/ui/login/submit/factor",
  enrolFactor: "/ui/login/factor/enrol",
  submitEnrolFactor: "/ui/login/submit/factor-enrol",
  /** The recovery codes, shown once after the first factor was enrolled during sign-in. */
  recoveryCodes: "/ui/login/factor/recovery-codes",
  submitRecoveryCodes: "/ui/login/submit/recovery-codes",
  /** The password just proven is due for a change (the policy's `changePassword` step). */
  changePassword: "/ui/login/password/change",
  submitChangePassword: "/ui/login/submit/password-change",
  /** "Sign in with a passkey" on the first page (the passkey's answer, posted by a script). */
  submitPasskey: "/ui/login/submit/passkey",
} as const;

export const CALLBACK_PATH = "/oauth/v2/authorize/callback";

export function loginUrl(path: string, authRequestId: string): string {
  return `${path}?authRequest=${encodeURIComponent(authRequestId)}`;
}

/**
 * The account page (lib/account/app.ts). Here, with the login's paths, because the protocol's
 * pages send people there too (a declined sign-out) and lib/account itself depends on them.
 */
export const ACCOUNT_PATH = "/ui/account";
