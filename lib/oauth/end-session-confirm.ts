import { OAuthError } from "@/lib/protocol/errors";
import { BodyTooLarge, bodyTooLargeResponse, MAX_FORM_BYTES, readBodyText } from "@/lib/http/body";
import { clientAddress } from "@/lib/http/client-address";
import { seeOther } from "@/lib/http/responses";
import type { Engine } from "@/lib/engine";
import { sameOrigin } from "@/lib/session/csrf";
import { userAgentOfRequest } from "@/lib/session/user-agent";
import { errorLocation, LOGOUT_PATHS, onIssuer, performLogout } from "./end-session";
import { openPendingLogout, verifyLogoutCsrf } from "./end-session-request";
import { isFormEncoded } from "@/lib/http/body";
import { ACCOUNT_PATH } from "@/lib/login/paths";
import { parseForm } from "./form";
import type { HttpRequest } from "@/lib/http/request";

/**
 * POST /ui/logout/confirm: the user answered the question about a logout that end_session could
 * not tie to a client. The form must come from our own origin, from this browser, with the CSRF
 * token of this very request; the pending logout must be intact and fresh. Then, for "sign out",
 * it happens exactly as end_session decided it, redirect included.
 *
 * "Stay signed in" (`stay=1`) ends nothing and still returns to the relying party's checked
 * post-logout redirect, as node-oidc-provider does: the relying party has ended its own session
 * before sending the user here, and leaving the user on our pages would strand them. Without a
 * redirect the user goes to their account page, where they are still signed in.
 */
export async function handleLogoutConfirm(inst: Engine, request: HttpRequest): Promise<Response> {
  if (request.method !== "POST") return new Response(null, { status: 405, headers: { Allow: "POST", "Cache-Control": "no-store" } });
  const issuer = inst.config.issuer;
  const refuse = () => seeOther(onIssuer(issuer, errorLocation("expired")));
  try {
    if (!sameOrigin(request, issuer)) return refuse();
    if (!isFormEncoded(request)) return refuse();
    const form = parseForm(await readBodyText(request, MAX_FORM_BYTES));
    const sealed = form.get("request") ?? "";
    const ua = await userAgentOfRequest(inst.store, issuer, request);
    if (!ua || !verifyLogoutCsrf(inst.masterKey, ua.id, sealed, form.get("csrf"))) return refuse();
    const pending = openPendingLogout(inst.masterKey, sealed, ua.id, inst.clock.now());
    if (!pending) return refuse();
    if (form.get("stay") === "1") return seeOther(onIssuer(issuer, pending.redirect ?? ACCOUNT_PATH));
    await performLogout(inst, {
      userAgentId: ua.id,
      userId: pending.user,
      clientId: pending.client,
      actor: { ip: clientAddress(request), userAgent: request.headers.get("user-agent") },
      via: "end_session_confirmation",
    });
    return seeOther(onIssuer(issuer, pending.redirect ?? LOGOUT_PATHS.signedOut));
  } catch (err) {
    if (err instanceof BodyTooLarge) return bodyTooLargeResponse();
    // A malformed form (a repeated field, a NUL) is refused like a forged one, without a log entry.
    if (err instanceof OAuthError) return refuse();
    inst.log.error({ err }, "logout confirmation failed");
    return refuse();
  }
}
