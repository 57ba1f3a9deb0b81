import { cookies } from "next/headers";
import { instance } from "@/lib/instance";
import { csrfToken } from "@/lib/session/csrf";
import { userAgentCookieName } from "@/lib/session/user-agent";
import { findPendingAuthRequest, type AuthRequest } from "@/lib/store/auth-requests";
import { getClient, type Client } from "@/lib/store/clients";
import { findUserAgent } from "@/lib/store/sessions";
import { getSettings, type Settings } from "@/lib/store/settings";

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
  const inst = await instance();
  const jar = await cookies();
  const cookie = jar.get(userAgentCookieName(inst.config.issuer))?.value;
  const ua = cookie ? await findUserAgent(inst.db, cookie) : undefined;
  if (!ua || !id) return null;
  const authRequest = await findPendingAuthRequest(inst.db, id, ua.id);
  if (!authRequest) return null;
  const client = await getClient(inst.db, authRequest.clientId);
  if (!client) return null;
  const settings = await getSettings(inst.db);
  return { id, csrf: csrfToken(inst.masterKey, ua.id, id), authRequest, client, settings };
}
