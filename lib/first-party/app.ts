import { dateOf } from "@/lib/clock";
import { mutate } from "@/lib/store/invalidation";
import type { Engine } from "@/lib/engine";
import { clientChanged, readClient, putClient } from "@/lib/store/clients";
import { getSettings } from "@/lib/store/settings";

/**
 * Torii's own web applications, the admin console and the account page, sign people in like any
 * relying party: a built-in public client using the code flow with PKCE through
 * /oauth/v2/authorize and the token endpoint. So they get the hosted login's sign-in policy
 * (prompts, second factors, verified addresses), lockout and sessions, and hold no password.
 */
export type FirstPartyApp = {
  clientId: string;
  name: string;
  /** Where the app lives; its redirect URI is `${path}/callback`, its signed-out page `${path}/signed-out`. */
  path: string;
  /** The app's session cookie and the cookie of a sign-in in progress (both scoped to `path`). */
  cookie: string;
  loginCookie: string;
  /** Longest life of the app's session cookie, seconds; the login session's own expiry applies too. */
  sessionMaxAgeSeconds: number;
};

export const appRedirectUri = (issuer: string, app: FirstPartyApp) => `${issuer}${app.path}/callback`;

/**
 * Registers (or repairs) the app's client. Idempotent and cheap, so it runs on every sign-in
 * start instead of at boot: a built-in client deleted or changed through the API is restored.
 */
export async function ensureAppClient(inst: Engine, app: FirstPartyApp): Promise<void> {
  const issuer = inst.issuer;
  const redirectUri = appRedirectUri(issuer, app);
  const existing = await readClient(inst.db, app.clientId);
  if (
    existing &&
    existing.authMethod === "none" &&
    existing.firstParty &&
    existing.redirectUris.length === 1 &&
    existing.redirectUris[0] === redirectUri &&
    existing.grantTypes.join() === "authorization_code" &&
    existing.responseTypes.join() === "code"
  ) {
    return;
  }
  const lifetimes = (await getSettings(inst)).lifetimes;
  const registration = {
    name: app.name,
    redirectUris: [redirectUri],
    postLogoutRedirectUris: [`${issuer}${app.path}/signed-out`],
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
    firstParty: true,
    updatedAt: dateOf(inst.clock),
  };
  await mutate(inst, [clientChanged(app.clientId)], (tx) => putClient(tx, app.clientId, registration));
}
