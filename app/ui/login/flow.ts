import { dateOf } from "@torii/core/clock";
import { cookies } from "next/headers";
import { torii } from "@torii/core/runtime";
import { csrfToken } from "@torii/core/session/csrf";
import { userAgentCookieName } from "@torii/core/session/user-agent";
import { findPendingAuthRequest, type AuthRequest } from "@torii/core/store/auth-requests";
import { getClient, type Client } from "@torii/core/store/clients";
import { findUserAgent } from "@torii/core/store/sessions";
import { getSettings, type Settings } from "@torii/core/store/settings";

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
