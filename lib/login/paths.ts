/** Where the hosted login lives; pages carry the pending request's id as `authRequest`. */
export const LOGIN_PATHS = {
  loginName: "/ui/login",
  password: "/ui/login/password",
  accounts: "/ui/login/accounts",
  register: "/ui/login/register",
  /** After a sign-up, the same page whether or not an account was created (no user enumeration). */
  registered: "/ui/login/registered",
  signedOut: "/ui/login/signedout",
  error: "/ui/login/error",
  submitLoginName: "/ui/login/submit/loginname",
  submitPassword: "/ui/login/submit/password",
  submitAccount: "/ui/login/submit/account",
  submitRegister: "/ui/login/submit/register",
} as const;

export const CALLBACK_PATH = "/oauth/v2/authorize/callback";

export function loginUrl(path: string, authRequestId: string): string {
  return `${path}?authRequest=${encodeURIComponent(authRequestId)}`;
}
