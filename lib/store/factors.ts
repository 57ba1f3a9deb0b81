import { and, asc, eq, isNotNull, isNull, lt, or, sql } from "drizzle-orm";
import { recoveryCodes, userFactors } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { decrypt, encrypt, hmac, randomId } from "@/lib/crypto";

/**
 * Storage of second factors (TOTP authenticators, passkeys) and recovery codes. A TOTP secret is
 * encrypted under the master key, bound to its row by the factor's id; recovery codes are kept
 * only as HMACs. Deciding what is valid is lib/login/second-factor.ts's job.
 */
export type Factor = typeof userFactors.$inferSelect;
export type FactorType = Factor["type"];

/** A pending TOTP enrolment older than this is replaced by a fresh secret. */
export const PENDING_TOTP_SECONDS = 15 * 60;

const secretAad = (factorId: string) => `totp-secret:${factorId}`;
const recoveryHash = (masterKey: Buffer, code: string) => hmac(masterKey, `recovery-code:${code}`);

/** The user's confirmed factors, oldest first (pending enrolments are not factors yet). */
export async function listFactors(db: Executor, userId: string, opts: { forUpdate?: boolean } = {}): Promise<Factor[]> {
  const q = db
    .select()
    .from(userFactors)
    .where(and(eq(userFactors.userId, userId), isNotNull(userFactors.confirmedAt)))
    .orderBy(asc(userFactors.createdAt), asc(userFactors.id));
  // In a transaction that changes them: other transactions wait until it commits.
  return opts.forUpdate ? q.for("update") : q;
}

export async function getFactor(db: Executor, userId: string, factorId: string): Promise<Factor | undefined> {
  const [row] = await db.select().from(userFactors).where(and(eq(userFactors.userId, userId), eq(userFactors.id, factorId)));
  return row;
}

/** The secret of a TOTP factor in clear (base32), for the code check or the enrolment page. */
export function totpSecretOf(masterKey: Buffer, factor: Pick<Factor, "id" | "secretEnc">): string {
  return decrypt(masterKey, factor.secretEnc!, secretAad(factor.id));
}

/**
 * The user's pending TOTP enrolment, created with `secret` when there is none younger than
 * PENDING_TOTP_SECONDS, so that reloading the enrolment page keeps showing the same QR code.
 */
export async function pendingTotp(db: Executor, masterKey: Buffer, userId: string, secret: () => string, now: Date): Promise<Factor> {
  const since = new Date(now.getTime() - PENDING_TOTP_SECONDS * 1000);
  const [open] = await db
    .select()
    .from(userFactors)
    .where(and(eq(userFactors.userId, userId), eq(userFactors.type, "totp"), isNull(userFactors.confirmedAt), sql`${userFactors.createdAt} > ${since.toISOString()}::timestamptz`))
    .orderBy(asc(userFactors.createdAt))
    .limit(1);
  if (open) return open;
  await db.delete(userFactors).where(and(eq(userFactors.userId, userId), isNull(userFactors.confirmedAt)));
  const id = randomId();
  const [row] = await db
    .insert(userFactors)
    .values({ id, userId, type: "totp", name: "", secretEnc: encrypt(masterKey, secret(), secretAad(id)), createdAt: now })
    .returning();
  return row!;
}

/**
 * Accepts a TOTP code's time step for the factor: only a step later than the last accepted one
 * (a code is good once, RFC 6238 5.2), atomically, so two requests with the same code cannot both
 * pass. Confirms a pending enrolment with its name. True when this step was accepted.
 */
export async function acceptTotpStep(db: Executor, factorId: string, step: number, opts: { name?: string }, now: Date): Promise<boolean> {
  const set: Partial<Factor> = { lastStep: step, lastUsedAt: now };
  if (opts.name !== undefined) Object.assign(set, { name: opts.name, confirmedAt: now });
  const rows = await db
    .update(userFactors)
    .set(set)
    .where(and(eq(userFactors.id, factorId), or(isNull(userFactors.lastStep), lt(userFactors.lastStep, step))))
    .returning({ id: userFactors.id });
  return rows.length === 1;
}

/** Removes one factor; true when it existed. */
export async function deleteFactor(db: Executor, userId: string, factorId: string): Promise<boolean> {
  const rows = await db.delete(userFactors).where(and(eq(userFactors.userId, userId), eq(userFactors.id, factorId))).returning({ id: userFactors.id });
  return rows.length === 1;
}

/** Removes every factor and recovery code of the user (the administrator's "reset second factors"). */
export async function deleteAllFactors(db: Executor, userId: string): Promise<number> {
  const rows = await db.delete(userFactors).where(eq(userFactors.userId, userId)).returning({ id: userFactors.id, confirmedAt: userFactors.confirmedAt });
  await db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
  return rows.filter((r) => r.confirmedAt).length;
}

/** Replaces the user's recovery codes with `codes` (only their HMACs are stored). */
export async function replaceRecoveryCodes(db: Executor, masterKey: Buffer, userId: string, codes: readonly string[], now: Date): Promise<void> {
  await db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
  await db.insert(recoveryCodes).values(codes.map((code) => ({ id: randomId(), userId, codeHash: recoveryHash(masterKey, code), createdAt: now })));
}

/** How many of the user's recovery codes are still unused. */
export async function unusedRecoveryCodes(db: Executor, userId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(recoveryCodes)
    .where(and(eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt)));
  return row?.n ?? 0;
}

/** Uses a recovery code: true when it was one of the user's unused codes (and is used now). */
export async function consumeRecoveryCode(db: Executor, masterKey: Buffer, userId: string, code: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(recoveryCodes)
    .set({ usedAt: now })
    .where(and(eq(recoveryCodes.userId, userId), eq(recoveryCodes.codeHash, recoveryHash(masterKey, code)), isNull(recoveryCodes.usedAt)))
    .returning({ id: recoveryCodes.id });
  return rows.length === 1;
}

/**
 * The user's pending passkey registration: a webauthn factor row without a credential yet,
 * holding the registration's challenge (encrypted like a TOTP secret). Earlier pending ones of
 * the user are replaced: only the newest prompt can complete.
 */
export async function pendingPasskey(db: Executor, masterKey: Buffer, userId: string, challenge: string, now: Date): Promise<Factor> {
  await db.delete(userFactors).where(and(eq(userFactors.userId, userId), eq(userFactors.type, "webauthn"), isNull(userFactors.confirmedAt)));
  const id = randomId();
  const [row] = await db
    .insert(userFactors)
    .values({ id, userId, type: "webauthn", name: "", secretEnc: encrypt(masterKey, challenge, secretAad(id)), createdAt: now })
    .returning();
  return row!;
}

/** The challenge of a pending passkey registration. */
export function passkeyChallengeOf(masterKey: Buffer, factor: Pick<Factor, "id" | "secretEnc">): string {
  return decrypt(masterKey, factor.secretEnc!, secretAad(factor.id));
}

/** Completes a pending passkey registration with its verified credential; false when it was completed already. */
export async function confirmPasskey(
  db: Executor,
  factorId: string,
  c: { name: string; credentialId: string; publicKey: string; signCount: number; transports: string[]; deviceType: string },
  now: Date,
): Promise<boolean> {
  const rows = await db
    .update(userFactors)
    .set({ ...c, secretEnc: null, confirmedAt: now })
    .where(and(eq(userFactors.id, factorId), isNull(userFactors.confirmedAt)))
    .returning({ id: userFactors.id });
  return rows.length === 1;
}

/** The confirmed passkey with this credential id, whoever's it is (a passwordless sign-in names nobody first). */
export async function findPasskey(db: Executor, credentialId: string): Promise<Factor | undefined> {
  if (!credentialId || credentialId.length > 1024) return undefined;
  const [row] = await db
    .select()
    .from(userFactors)
    .where(and(eq(userFactors.credentialId, credentialId), eq(userFactors.type, "webauthn"), isNotNull(userFactors.confirmedAt)));
  return row;
}

/**
 * Records a passkey's use with the authenticator's new signature counter, only if the stored
 * counter is still the one the check was made against (two uses of one assertion cannot both pass).
 */
export async function recordPasskeyUse(db: Executor, factorId: string, previous: number, next: number, now: Date): Promise<boolean> {
  const rows = await db
    .update(userFactors)
    .set({ signCount: next, lastUsedAt: now })
    .where(and(eq(userFactors.id, factorId), eq(userFactors.signCount, previous)))
    .returning({ id: userFactors.id });
  return rows.length === 1;
}
