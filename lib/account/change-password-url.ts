import type { Engine } from "@/lib/engine";
import type { HttpRequest } from "@/lib/http/request";
import { found } from "@/lib/http/responses";
import { ACCOUNT_PATH } from "@/lib/login/paths";

/** W3C "A Well-Known URL for Changing Passwords": where a password manager sends its user. */
export const CHANGE_PASSWORD_URL = "/.well-known/change-password";

/**
 * Redirects to the account page's password section. A password manager (Chrome's, Safari's,
 * 1Password) offers "change password" for a site only when this address redirects. A user who
 * is not signed in signs in first and lands on the account page (the sign-in's form post does
 * not keep the fragment); a signed-in one lands on the section itself.
 */
export function handleChangePasswordUrl(engine: Engine, _request: HttpRequest): Promise<Response> {
  // Its route (lib/server/routes.ts, or Next's under `next dev`) has refused every other method.
  return Promise.resolve(found(`${engine.config.issuer}${ACCOUNT_PATH}#password`));
}
