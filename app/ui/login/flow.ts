import { dateOf } from "@torii/core/clock";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { torii } from "@torii/core/runtime";
import { csrfToken } from "@torii/core/session/csrf";
import { userAgentCookieName } from "@torii/core/session/user-agent";
import { findPendingAuthRequest, type AuthRequest } from "@torii/core/store/auth-requests";
import { getClient, type Client } from "@torii/core/store/clients";
import { findUserAgent } from "@torii/core/store/sessions";
import { pendingStep, type SessionAccount } from "@torii/core/login/steps";
import { CALLBACK_PATH } from "@torii/core/login/paths";
import type { ACCOUNT_STEPS } from "@torii/core/login/signin-policy";
import { getSettings, type Settings } from "@torii/core/store/settings";
import { ACCOUNT_PATH } from "@torii/core/account/app";

export type LoginFlow = {
  id: string;
  csrf: string;
  authRequest: AuthRequest;
  client: Client;
  settings: Settings;
};

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

/** The pending request a login page belongs to, if this browser started it and it is still open. */
export async function loadFlow(searchParams: SearchParams): Promise<LoginFlow | null> {
  const sp = await searchParams;
  // Opened with no sign-in request at all (a bookmark, a typed address): whoever comes here wants
  // to sign in, so they sign in to their account page, which starts a request of its own. A
  // request that has expired or is not this browser's still gets the page that says so.
  if (sp.authRequest === undefined) redirect(ACCOUNT_PATH);
  const id = typeof sp.authRequest === "string" ? sp.authRequest : "";
  const inst = await torii();
  const jar = await cookies();
  const cookie = jar.get(userAgentCookieName(inst.config.issuer))?.value;
  const ua = cookie ? await findUserAgent(inst.db, cookie) : undefined;
  if (!ua || !id) return null;
  const authRequest = await findPendingAuthRequest(inst.db, id, ua.id, dateOf(inst.clock));
  if (!authRequest) return null;
  const client = await getClient(inst, authRequest.clientId);
  if (!client) return null;
  const settings = await getSettings(inst);
  return { id, csrf: csrfToken(inst.masterKey, ua.id, id), authRequest, client, settings };
}

/**
 * The gate of a page of the policy's account or consent steps, as `accountStep` is for their form
 * handlers (lib/login/handlers.ts): the flow and the account the policy asks `want` of, or null
 * when the flow is gone. When the policy asks something else now, the browser goes to the
 * callback, which asks it again.
 */
export async function loadAccountStep(
  searchParams: SearchParams,
  want: (typeof ACCOUNT_STEPS)[number],
): Promise<{ flow: LoginFlow; account: SessionAccount } | null> {
  const flow = await loadFlow(searchParams);
  if (!flow) return null;
  const inst = await torii();
  const step = await pendingStep(inst.store, flow.authRequest, flow.client, flow.settings.primaryDomain, dateOf(inst.clock));
  if (step.step !== want || !("account" in step)) redirect(`${CALLBACK_PATH}?id=${encodeURIComponent(flow.id)}`);
  return { flow, account: step.account };
}
