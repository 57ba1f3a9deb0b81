import { dateOf } from "@/lib/clock";
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import type { Engine } from "@/lib/engine";
import { recordAudit, type Actor } from "@/lib/store/audit";
import { confirmPasskey, findPasskey, getFactor, listFactors, passkeyChallengeOf, pendingPasskey, recordPasskeyUse, unusedRecoveryCodes } from "@/lib/store/factors";
import type { User } from "@/lib/store/users";
import { factorName, newRecoveryCodes, type FactorMethod } from "./second-factor";

/**
 * Passkeys (WebAuthn, with @simplewebauthn/server): registered on the account page, used as a
 * second factor after the password, or alone ("Sign in with a passkey", discoverable
 * credentials). The relying party is the issuer's host; every ceremony requires user
 * verification (the device's PIN or biometrics), so a passkey alone counts as two factors:
 * something held and something known or been (`amr` `hwk` or `swk`, and `mfa`). A synced passkey
 * (`multiDevice`) is a software-held key (`swk`), a device-bound one hardware (`hwk`), RFC 8176.
 * Challenges are kept on the server, single-use and short-lived, never only in a cookie: a
 * registration's lives in its pending factor row (answerable for REGISTRATION_CHALLENGE_SECONDS),
 * a sign-in's in the pending authorization request (which expires with it); either is cleared when
 * it is answered, so a replayed answer finds no challenge to match.
 */

/** How long a passkey registration's challenge may be answered (the browser's prompt times out well before). */
export const REGISTRATION_CHALLENGE_SECONDS = 600;

const rpOf = (issuer: string) => {
  const url = new URL(issuer);
  return { rpID: url.hostname, origin: url.origin };
};

const base64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");

/** Starts a passkey registration for the user: the options for the browser, and the pending factor's id. */
export async function passkeyRegistration(inst: Engine, user: Pick<User, "id" | "username" | "givenName" | "familyName">, rpName: string): Promise<{ factorId: string; options: PublicKeyCredentialCreationOptionsJSON }> {
  const { rpID } = rpOf(inst.issuer);
  const existing = (await listFactors(inst.db, user.id)).filter((f) => f.type === "webauthn" && f.credentialId);
  const options = await generateRegistrationOptions({
    rpName,
    rpID,
    userName: user.username,
    userDisplayName: [user.givenName, user.familyName].filter(Boolean).join(" ") || user.username,
    userID: new TextEncoder().encode(user.id),
    attestationType: "none",
    excludeCredentials: existing.map((f) => ({ id: f.credentialId!, transports: f.transports as AuthenticatorTransport[] })),
    authenticatorSelection: { residentKey: "required", userVerification: "required" },
  });
  const pending = await pendingPasskey(inst.db, inst.masterKey, user.id, options.challenge, dateOf(inst.clock));
  return { factorId: pending.id, options };
}

/**
 * Parses the browser's answer (a JSON string from a form field) far enough to hand it to the
 * library, which checks the rest; null when it is not a credential at all.
 */
function parseCredential(json: string): (RegistrationResponseJSON & AuthenticationResponseJSON) | null {
  if (!json || json.length > 16_384) return null;
  try {
    const value = JSON.parse(json) as { id?: unknown; rawId?: unknown; type?: unknown; response?: unknown } | null;
    const ok = value !== null && typeof value.id === "string" && typeof value.rawId === "string" && value.type === "public-key" && typeof value.response === "object" && value.response !== null;
    return ok ? (value as RegistrationResponseJSON & AuthenticationResponseJSON) : null;
  } catch {
    return null;
  }
}

/** Completes a registration with the browser's answer; a user's first factor comes with recovery codes. */
export async function confirmPasskeyRegistration(
  inst: Engine,
  userId: string,
  factorId: string,
  input: { response: string; name: string },
  actor: Actor,
): Promise<{ ok: true; recoveryCodes: string[] | null; method: Extract<FactorMethod, "hwk" | "swk"> } | { ok: false }> {
  const pending = await getFactor(inst.db, userId, factorId);
  const response = parseCredential(input.response);
  if (!pending || pending.type !== "webauthn" || pending.confirmedAt || !pending.secretEnc || !response) return { ok: false };
  // A registration prompt is answered within minutes; an older challenge is not taken any more.
  if (inst.clock.now() - pending.createdAt.getTime() > REGISTRATION_CHALLENGE_SECONDS * 1000) return { ok: false };
  const { rpID, origin } = rpOf(inst.issuer);
  let verified;
  try {
    verified = await verifyRegistrationResponse({ response, expectedChallenge: passkeyChallengeOf(inst.masterKey, pending), expectedOrigin: origin, expectedRPID: rpID, requireUserVerification: true });
  } catch {
    return { ok: false };
  }
  if (!verified.verified) return { ok: false };
  const info = verified.registrationInfo;
  const name = await factorName(inst, userId, input.name, "Passkey");
  const done = await confirmPasskey(inst.db, factorId, {
    name,
    credentialId: info.credential.id,
    publicKey: base64url(info.credential.publicKey),
    signCount: info.credential.counter,
    transports: info.credential.transports ?? [],
    deviceType: info.credentialDeviceType,
  }, dateOf(inst.clock));
  if (!done) return { ok: false };
  await recordAudit(inst.db, actor, { action: "user.factor.added", targetType: "user", targetId: userId, details: { factorId, type: "webauthn", name, synced: info.credentialDeviceType === "multiDevice" } });
  const first = (await listFactors(inst.db, userId)).length === 1 && (await unusedRecoveryCodes(inst.db, userId)) === 0;
  return { ok: true, recoveryCodes: first ? await newRecoveryCodes(inst, userId, actor) : null, method: info.credentialDeviceType === "multiDevice" ? "swk" : "hwk" };
}

/**
 * Options for a passkey prompt at sign-in. Without `userId`, any discoverable passkey of this
 * site may answer (passwordless); with it, only that user's passkeys (a second factor).
 */
export async function passkeyPrompt(inst: Engine, userId?: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { rpID } = rpOf(inst.issuer);
  const allow = userId ? (await listFactors(inst.db, userId)).filter((f) => f.type === "webauthn" && f.credentialId) : [];
  return generateAuthenticationOptions({
    rpID,
    userVerification: "required",
    allowCredentials: allow.map((f) => ({ id: f.credentialId!, transports: f.transports as AuthenticatorTransport[] })),
  });
}

/** Whether the user has a passkey (the factor page then offers it). */
export async function hasPasskey(inst: Engine, userId: string): Promise<boolean> {
  return (await listFactors(inst.db, userId)).some((f) => f.type === "webauthn");
}

/**
 * Checks the browser's answer to a sign-in prompt whose challenge was `challenge`: the passkey's
 * user (only `userId`'s when given) and what it was, RFC 8176 style.
 */
export async function verifyPasskey(
  inst: Engine,
  json: string,
  challenge: string,
  opts: { userId?: string } = {},
): Promise<{ ok: true; userId: string; factorId: string; method: Extract<FactorMethod, "hwk" | "swk"> } | { ok: false }> {
  const response = parseCredential(json);
  if (!response) return { ok: false };
  const factor = await findPasskey(inst.db, response.id);
  if (!factor?.publicKey || (opts.userId && factor.userId !== opts.userId)) return { ok: false };
  const { rpID, origin } = rpOf(inst.issuer);
  let verified;
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      credential: { id: factor.credentialId!, publicKey: Buffer.from(factor.publicKey, "base64url"), counter: factor.signCount, transports: factor.transports },
      requireUserVerification: true,
    });
  } catch {
    return { ok: false };
  }
  if (!verified.verified || !(await recordPasskeyUse(inst.db, factor.id, factor.signCount, verified.authenticationInfo.newCounter, dateOf(inst.clock)))) return { ok: false };
  return { ok: true, userId: factor.userId, factorId: factor.id, method: factor.deviceType === "multiDevice" ? "swk" : "hwk" };
}
