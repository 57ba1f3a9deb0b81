import type { KeyObject } from "node:crypto";
import { and, asc, eq, lt } from "drizzle-orm";
import { signingKeys } from "@/db/schema";
import { advisoryXactLock, type Executor } from "@/lib/db/client";

/** Storage of the signing keys; lib/keys/signing-keys.ts creates, encrypts, rotates and publishes them. */

export type SigningKeyRow = typeof signingKeys.$inferSelect;

/** The key tokens are signed with now (lib/keys/signing-keys.ts decrypts and caches it). */
/** `signer`: the same private key as a node:crypto KeyObject, for lib/keys/jws.ts. */
export type ActiveKey = { kid: string; alg: string; privateKey: CryptoKey; signer?: KeyObject };
export type NewSigningKeyRow = typeof signingKeys.$inferInsert;

/** Advisory lock shared by all instances so that one rotation happens, not one per instance. */
const ROTATION_LOCK = 72_690_002;

/** Takes the rotation lock until the transaction `tx` ends. */
export async function lockRotation(tx: Executor): Promise<void> {
  await advisoryXactLock(tx, ROTATION_LOCK);
}

export async function insertSigningKey(db: Executor, row: NewSigningKeyRow): Promise<void> {
  await db.insert(signingKeys).values(row);
}

/** Every key, oldest first. */
export function allSigningKeys(db: Executor): Promise<SigningKeyRow[]> {
  return db.select().from(signingKeys).orderBy(asc(signingKeys.createdAt));
}

/** The keys with status `active`, oldest first. */
export function activeSigningKeys(db: Executor): Promise<SigningKeyRow[]> {
  return db.select().from(signingKeys).where(eq(signingKeys.status, "active")).orderBy(asc(signingKeys.createdAt));
}

/** Retires every active key: it signs until `signsFrom` and is removed after `removeAfter`. */
export async function retireActiveKeys(db: Executor, signsFrom: Date, removeAfter: Date): Promise<void> {
  await db.update(signingKeys).set({ status: "retired", retiredAt: signsFrom, removeAfter }).where(eq(signingKeys.status, "active"));
}

/** Deletes retired keys past their removal time; returns their kids. */
export async function deleteRemovableKeys(db: Executor, now: Date): Promise<string[]> {
  const removed = await db
    .delete(signingKeys)
    .where(and(eq(signingKeys.status, "retired"), lt(signingKeys.removeAfter, now)))
    .returning({ kid: signingKeys.kid });
  return removed.map((r) => r.kid);
}
