import { mutate } from "@/lib/store/invalidation";
import type { Engine } from "@/lib/engine";
import { clientChanged, readClient, putClient } from "@/lib/store/clients";
import { getSettings } from "@/lib/store/settings";

/**
 * The console signs administrators in like any relying party: a built-in public client using the
 * code flow with PKCE through /oauth/v2/authorize and the token endpoint. So the console gets
 * the hosted login's prompts, lockout and sessions for free and holds no password itself.
 */
export const CONSOLE_CLIENT_ID = "torii-console";
export const CONSOLE_PATH = "/ui/console";

export const consoleRedirectUri = (issuer: string) => `${issuer}${CONSOLE_PATH}/callback`;

/**
 * Registers (or repairs) the console client. Idempotent and cheap, so it runs on every sign-in
 * start instead of at boot: a console client deleted or changed through the API is restored.
 */
export async function ensureConsoleClient(inst: Engine): Promise<void> {
  const issuer = inst.issuer;
  const redirectUri = consoleRedirectUri(issuer);
  const existing = await readClient(inst.db, CONSOLE_CLIENT_ID);
  if (
    existing &&
    existing.authMethod === "none" &&
    existing.redirectUris.length === 1 &&
    existing.redirectUris[0] === redirectUri &&
    existing.grantTypes.join() === "authorization_code" &&
    existing.responseTypes.join() === "code"
  ) {
    return;
  }
  const lifetimes = (await getSettings(inst)).lifetimes;
  const registration = {
    name: "Torii Console",
    redirectUris: [redirectUri],
    postLogoutRedirectUris: [`${issuer}${CONSOLE_PATH}/signed-out`],
    responseTypes: ["code"],
    grantTypes: ["authorization_code"],
    authMethod: "none",
    jwks: null,
    accessTokenType: "jwt",
    idTokenUserinfoAssertion: false,
    accessTokenLifetime: Math.min(lifetimes.accessToken, 900),
    idTokenLifetime: Math.min(lifetimes.idToken, 900),
    refreshTokenLifetime: lifetimes.refreshToken,
    secretHash: null,
    updatedAt: new Date(),
  };
  await mutate(inst, [clientChanged(CONSOLE_CLIENT_ID)], (tx) => putClient(tx, CONSOLE_CLIENT_ID, registration));
}
