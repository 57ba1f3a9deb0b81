import { dateOf } from "@/lib/clock";
import type { Engine } from "@/lib/engine";
import type { AppAccess } from "@/lib/first-party/app-session";
import { accountPolicyOf } from "@/lib/login/account-policy";
import { totpEnrolment, type TotpEnrolment } from "@/lib/login/second-factor";
import { passkeyRegistration } from "@/lib/login/passkeys";
import { listAuditEvents, type AuditRow } from "@/lib/store/audit-events";
import { listUserConsents } from "@/lib/store/consents";
import { listFactors, unusedRecoveryCodes, type Factor } from "@/lib/store/factors";
import { appsOfUser } from "@/lib/store/grants";
import { getLiveSession, liveSessionsOfUser, type Session } from "@/lib/store/sessions";
import { getSettings } from "@/lib/store/settings";
import { describeDevice, type Device } from "@/lib/session/device";
import type { User } from "@/lib/store/users";
import { ACCOUNT_APP, isRecentSignIn } from "./app";
import { CONSOLE_CLIENT_ID } from "@/lib/console/client";

/** Everything the account page shows, read in one place. */
export type AccountOverview = {
  user: User;
  mfa: "off" | "optional" | "required";
  emailVerification: "off" | "optional" | "required";
  factors: Factor[];
  recoveryCodesLeft: number;
  /** The pending authenticator to show, when the person asked to add one. */
  enrolment: TotpEnrolment | null;
  /** The pending passkey registration to offer, when the person asked to add one: its factor and the browser's options (JSON). */
  passkeyRegistration: { factorId: string; options: string } | null;
  /** Whether factor and address changes are allowed now (a sign-in within RECENT_SIGN_IN_SECONDS). */
  recentSignIn: boolean;
  /** Live sessions of the user, each with what its latest sign-in's User-Agent says (`device`). */
  sessions: (Session & { current: boolean; device: Device })[];
  /** Applications holding tokens of the user or a consent, without Torii's own apps. */
  apps: { clientId: string; clientName: string; lastGrantAt: Date | null; consentScopes: string[] | null }[];
  events: AuditRow[];
  /** Names of the applications the events mention, by client id (an id without a name: deleted since). */
  clientNames: Record<string, string>;
};

const OWN_APPS = new Set([ACCOUNT_APP.clientId, CONSOLE_CLIENT_ID]);

export async function accountOverview(inst: Engine, access: AppAccess, opts: { add: "authenticator" | "passkey" | null }): Promise<AccountOverview> {
  const userId = access.user.id;
  const settings = await getSettings(inst);
  const policy = accountPolicyOf(settings);
  const [factors, recoveryCodesLeft, sessions, grants, consents, events, current] = await Promise.all([
    listFactors(inst.db, userId),
    unusedRecoveryCodes(inst.db, userId),
    liveSessionsOfUser(inst.db, userId, dateOf(inst.clock)),
    appsOfUser(inst.db, userId, dateOf(inst.clock)),
    listUserConsents(inst.db, userId),
    listAuditEvents(inst.db, { involving: userId, limit: 20, offset: 0 }),
    getLiveSession(inst.db, access.userAgentId, access.sid, dateOf(inst.clock)),
  ]);
  const apps = new Map<string, AccountOverview["apps"][number]>();
  for (const g of grants) apps.set(g.clientId, { clientId: g.clientId, clientName: g.clientName, lastGrantAt: g.lastGrantAt, consentScopes: null });
  for (const c of consents) {
    const known = apps.get(c.clientId);
    // API scopes read "API name: scope" (a scope name is only unique within its API).
    const apiNames = new Map((await inst.store.apis.list()).map((a) => [a.identifier, a.name]));
    const apiScopes = Object.entries(c.apis).flatMap(([api, scopes]) => {
      const name = apiNames.get(api) ?? api;
      return scopes.length ? scopes.map((s) => `${name}: ${s}`) : [name];
    });
    apps.set(c.clientId, { clientId: c.clientId, clientName: c.clientName, lastGrantAt: known?.lastGrantAt ?? null, consentScopes: [...c.scopes, ...apiScopes] });
  }
  for (const id of OWN_APPS) apps.delete(id);
  const clientNames: Record<string, string> = {};
  for (const id of new Set(events.events.map((e) => e.clientId).filter((c): c is string => !!c))) {
    const client = await inst.store.clients.get(id);
    if (client) clientNames[id] = client.name;
  }
  const recentSignIn = !!current && isRecentSignIn(current.authTime, inst.clock.now());
  const canAdd = policy.mfa !== "off" && recentSignIn;
  const product = settings.branding.productName || "Torii";
  const enrolment = canAdd && opts.add === "authenticator" ? await totpEnrolment(inst, access.user, product) : null;
  const registration = canAdd && opts.add === "passkey" ? await passkeyRegistration(inst, access.user, product) : null;
  return {
    user: access.user,
    mfa: policy.mfa,
    emailVerification: policy.emailVerification,
    factors,
    recoveryCodesLeft,
    enrolment,
    passkeyRegistration: registration ? { factorId: registration.factorId, options: JSON.stringify(registration.options) } : null,
    recentSignIn,
    sessions: sessions.map((s) => ({ ...s, current: s.id === access.sid, device: describeDevice(s.userAgent) })),
    apps: [...apps.values()],
    events: events.events,
    clientNames,
  };
}
