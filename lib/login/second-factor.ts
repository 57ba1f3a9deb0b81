import { dateOf } from "@/lib/clock";
import { randomInt } from "node:crypto";
import { Secret, TOTP } from "otpauth";
import QRCode from "qrcode";
import type { LockoutPolicy, MfaPolicy } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import type { Engine } from "@/lib/engine";
import { recordAudit, type Actor } from "@/lib/store/audit";
import {
  acceptTotpStep,
  consumeRecoveryCode,
  deleteAllFactors,
  deleteFactor,
  getFactor,
  listFactors,
  pendingTotp,
  replaceRecoveryCodes,
  totpSecretOf,
  unusedRecoveryCodes,
  type Factor,
} from "@/lib/store/factors";
import { accountKeyOf, attemptVerdict, clearFailures, recordFailure, type Attempt } from "./lockout";
import { showable } from "@/lib/text/shown-text";

/**
 * Second factors: TOTP authenticators (RFC 6238) and recovery codes. What the sign-in policy asks
 * for is decided in lib/login/signin-policy.ts (`second_factor`); this module enrols and checks.
 *
 * TOTP uses what every authenticator app understands: SHA-1, 6 digits, 30-second steps, a 160-bit
 * secret (RFC 4226 4 recommends 160 bits). A code is accepted one step early or late (clock drift,
 * RFC 6238 5.2) and only once: the factor remembers the last step it accepted. Wrong codes count
 * toward the lockout exactly like wrong passwords (lib/login/lockout.ts), on the user's account.
 */

export const TOTP_DIGITS = 6;
export const TOTP_PERIOD = 30;
const TOTP_WINDOW = 1;
/** Ten codes of ten characters from an alphabet without look-alikes (0/O, 1/l/I): ~50 bits each. */
export const RECOVERY_CODE_COUNT = 10;
const RECOVERY_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"; // = [23456789a-hjkmnp-z]

/** The methods RFC 8176 names for what a sign-in used; `mfa` whenever a second factor was used. */
export type FactorMethod = "otp" | "hwk" | "swk";

function totpOf(issuerLabel: string, account: string, secretBase32: string): TOTP {
  return new TOTP({ issuer: issuerLabel, label: account, algorithm: "SHA1", digits: TOTP_DIGITS, period: TOTP_PERIOD, secret: Secret.fromBase32(secretBase32) });
}

/** What the enrolment page shows: the pending factor's QR code (SVG), its otpauth URI and the secret to type by hand. */
export type TotpEnrolment = { factorId: string; secret: string; uri: string; qrSvg: string };

/** The user's pending TOTP enrolment (the same one until confirmed or PENDING_TOTP_SECONDS old). */
export async function totpEnrolment(inst: Engine, user: { id: string; username: string }, issuerLabel: string): Promise<TotpEnrolment> {
  const factor = await pendingTotp(inst.db, inst.masterKey, user.id, () => new Secret({ size: 20 }).base32, dateOf(inst.clock));
  const secret = totpSecretOf(inst.masterKey, factor);
  const uri = totpOf(issuerLabel, user.username, secret).toString();
  const qrSvg = await QRCode.toString(uri, { type: "svg", errorCorrectionLevel: "M", margin: 1 });
  return { factorId: factor.id, secret: secret.replace(/(.{4})/g, "$1 ").trim(), uri, qrSvg };
}

/** The time step a code matches for this factor, or null. */
function matchingStep(inst: Engine, factor: Factor, code: string, now: Date): number | null {
  if (!new RegExp(`^\\d{${TOTP_DIGITS}}$`).test(code)) return null;
  const delta = totpOf("", "", totpSecretOf(inst.masterKey, factor)).validate({ token: code, timestamp: now.getTime(), window: TOTP_WINDOW });
  return delta === null ? null : Math.floor(now.getTime() / 1000 / TOTP_PERIOD) + delta;
}

/** Generates new recovery codes for the user, replacing the old ones; the clear codes are shown once. */
export async function newRecoveryCodes(inst: Engine, userId: string, actor: Actor): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const c = Array.from({ length: 10 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join("");
    return `${c.slice(0, 5)}-${c.slice(5)}`;
  });
  await inst.db.transaction(async (tx) => {
    await replaceRecoveryCodes(tx, inst.masterKey, userId, codes, dateOf(inst.clock));
    await recordAudit(tx, actor, { action: "user.recovery_codes.generated", targetType: "user", targetId: userId, details: { count: codes.length } });
  });
  return codes;
}

/** A typed recovery code in its stored form: lower case, the dash where it belongs, spaces ignored. */
function normalRecoveryCode(input: string): string | null {
  const c = input.toLowerCase().replace(/[\s-]/g, "");
  return /^[23456789a-hjkmnp-z]{10}$/.test(c) ? `${c.slice(0, 5)}-${c.slice(5)}` : null;
}

/**
 * The name a new factor is listed under: the one typed (shown text only, at most 64 characters),
 * or else `fallback`, numbered when the user already has a factor of that name ("Authenticator 2"),
 * so that the account page and the console can tell them apart.
 */
export async function factorName(inst: Engine, userId: string, typed: string, fallback: string): Promise<string> {
  const name = showable(typed).trim().slice(0, 64);
  if (name) return name;
  const taken = new Set((await listFactors(inst.db, userId)).map((f) => f.name));
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? fallback : `${fallback} ${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/**
 * Confirms a pending TOTP enrolment with its first code. The first factor of a user also creates
 * their recovery codes, returned in clear for the one time they are shown.
 */
export async function confirmTotpEnrolment(
  inst: Engine,
  userId: string,
  factorId: string,
  input: { code: string; name: string },
  actor: Actor,
  now = dateOf(inst.clock),
): Promise<{ ok: true; recoveryCodes: string[] | null } | { ok: false }> {
  const pending = await getFactor(inst.db, userId, factorId);
  if (!pending || pending.type !== "totp" || pending.confirmedAt) return { ok: false };
  const step = matchingStep(inst, pending, input.code.replace(/\s/g, ""), now);
  if (step === null) return { ok: false };
  const name = await factorName(inst, userId, input.name, "Authenticator");
  if (!(await acceptTotpStep(inst.db, factorId, step, { name }, now))) return { ok: false };
  await recordAudit(inst.db, actor, { action: "user.factor.added", targetType: "user", targetId: userId, details: { factorId, type: "totp", name } });
  const first = (await listFactors(inst.db, userId)).length === 1 && (await unusedRecoveryCodes(inst.db, userId)) === 0;
  return { ok: true, recoveryCodes: first ? await newRecoveryCodes(inst, userId, actor) : null };
}

export type FactorCheck =
  | { ok: true; method: FactorMethod; via: "totp" | "recoveryCode" | "passkey"; factorId: string | null }
  | { ok: false; reason: "invalid"; lockedUntil?: Date }
  | { ok: false; reason: "throttled" | "accountLocked"; retryAfterSeconds: number };

/**
 * Checks a code typed at sign-in: a TOTP code of one of the user's authenticators, or one of their
 * recovery codes. Under the lockout policy: a throttled or locked try checks nothing, a wrong code
 * is a failure of the account like a wrong password.
 */
export async function checkSecondFactor(
  inst: Engine,
  opts: { userId: string; code: string; address: string; trusted: boolean; policy: LockoutPolicy; now?: Date },
): Promise<FactorCheck> {
  const now = opts.now ?? dateOf(inst.clock);
  const attempt: Attempt = { accountKey: accountKeyOf(opts.userId, "", ""), address: opts.address, trusted: opts.trusted };
  const verdict = await attemptVerdict(inst.db, opts.policy, attempt, now);
  if (!verdict.allowed) return { ok: false, reason: verdict.reason, retryAfterSeconds: verdict.retryAfterSeconds };
  const code = opts.code.replace(/\s/g, "").slice(0, 64);
  for (const factor of await listFactors(inst.db, opts.userId)) {
    if (factor.type !== "totp") continue;
    const step = matchingStep(inst, factor, code, now);
    if (step !== null && (await acceptTotpStep(inst.db, factor.id, step, {}, now))) {
      await clearFailures(inst.db, attempt);
      return { ok: true, method: "otp", via: "totp", factorId: factor.id };
    }
  }
  const recovery = normalRecoveryCode(code);
  if (recovery && (await consumeRecoveryCode(inst.db, inst.masterKey, opts.userId, recovery, now))) {
    await clearFailures(inst.db, attempt);
    return { ok: true, method: "otp", via: "recoveryCode", factorId: null };
  }
  const locked = await recordFailure(inst.db, opts.policy, { ...attempt, userId: opts.userId }, now);
  return { ok: false, reason: "invalid", ...(locked ? { lockedUntil: locked.lockedUntil } : {}) };
}

/** The session's `amr` once a second factor completed the sign-in (RFC 8176). */
export function amrWithFactor(amr: readonly string[], method: FactorMethod): string[] {
  return [...new Set([...amr, method, "mfa"])];
}

/** Whether a session's `amr` includes a second factor. */
export function hasSecondFactor(amr: readonly string[]): boolean {
  return amr.includes("mfa");
}

export type FactorRemoval = { ok: true } | { ok: false; reason: "gone" | "required" };

/**
 * The one rule for removing a second factor, on the account page (`byOwner`) and by an
 * administrator alike. The last factor takes the recovery codes with it (they recover a factor
 * that is no more). While the settings require a second factor, the owner cannot remove their
 * last one; an administrator can (a lost phone), and the sign-in policy then has the user enrol
 * a new one at the next sign-in (`enrolFactor`). Counted inside the transaction, so that two
 * removals at once cannot both think the other factor remains.
 */
export async function removeSecondFactor(
  db: Executor,
  userId: string,
  factorId: string,
  actor: Actor,
  opts: { byOwner: boolean; mfa: MfaPolicy },
): Promise<FactorRemoval> {
  return db.transaction(async (tx) => {
    const factor = await getFactor(tx, userId, factorId);
    if (!factor?.confirmedAt) return { ok: false, reason: "gone" } as const;
    // Serialise removals of one user's factors: lock their rows before counting.
    const all = await listFactors(tx, userId, { forUpdate: true });
    const last = all.length === 1;
    if (last && opts.byOwner && opts.mfa === "required") return { ok: false, reason: "required" } as const;
    if (last) await deleteAllFactors(tx, userId);
    else await deleteFactor(tx, userId, factor.id);
    await recordAudit(tx, actor, { action: "user.factor.removed", targetType: "user", targetId: userId, details: { factorId: factor.id, type: factor.type, name: factor.name, last } });
    return { ok: true } as const;
  });
}
