import { and, desc, eq, gt, isNull, lt, sql } from "drizzle-orm";
import { emailVerifications } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { hmac, randomId } from "@/lib/crypto";

export type EmailVerification = typeof emailVerifications.$inferSelect;

/** Wrong codes a verification survives; then a new one must be sent. */
export const MAX_CODE_ATTEMPTS = 5;

const keyed = (masterKey: Buffer, kind: "code" | "token", value: string) => hmac(masterKey, `email-verification:${kind}:${value}`);

/** A new verification of `email`; earlier open ones of the user are retired (only the newest mail counts). */
export async function createEmailVerification(
  db: Executor,
  masterKey: Buffer,
  v: { userId: string; email: string; code: string; token: string; lifetimeSeconds: number },
  now: Date,
): Promise<void> {
  await db.update(emailVerifications).set({ usedAt: now }).where(and(eq(emailVerifications.userId, v.userId), isNull(emailVerifications.usedAt)));
  await db.insert(emailVerifications).values({
    id: randomId(),
    userId: v.userId,
    email: v.email,
    codeHash: keyed(masterKey, "code", v.code),
    tokenHash: keyed(masterKey, "token", v.token),
    expiresAt: new Date(now.getTime() + v.lifetimeSeconds * 1000),
    createdAt: now,
  });
}

/** The user's open verification, if any. */
export async function openEmailVerification(db: Executor, userId: string, now: Date): Promise<EmailVerification | undefined> {
  const [row] = await db
    .select()
    .from(emailVerifications)
    .where(and(eq(emailVerifications.userId, userId), isNull(emailVerifications.usedAt), gt(emailVerifications.expiresAt, now)))
    .orderBy(desc(emailVerifications.createdAt))
    .limit(1);
  return row;
}

/**
 * Checks a code typed on the page against the user's open verification: used on a match; counted
 * otherwise, and retired after MAX_CODE_ATTEMPTS wrong ones.
 */
export async function consumeEmailCode(db: Executor, masterKey: Buffer, userId: string, code: string, now: Date): Promise<EmailVerification | undefined> {
  const open = await openEmailVerification(db, userId, now);
  if (!open) return undefined;
  if (open.codeHash === keyed(masterKey, "code", code)) {
    const [used] = await db
      .update(emailVerifications)
      .set({ usedAt: now })
      .where(and(eq(emailVerifications.id, open.id), isNull(emailVerifications.usedAt)))
      .returning();
    return used;
  }
  await db
    .update(emailVerifications)
    .set({ attempts: sql`${emailVerifications.attempts} + 1`, usedAt: open.attempts + 1 >= MAX_CODE_ATTEMPTS ? now : null })
    .where(eq(emailVerifications.id, open.id));
  return undefined;
}

/** Uses the mail's link once, while it is open. */
export async function consumeEmailToken(db: Executor, masterKey: Buffer, token: string, now: Date): Promise<EmailVerification | undefined> {
  const [used] = await db
    .update(emailVerifications)
    .set({ usedAt: now })
    .where(and(eq(emailVerifications.tokenHash, keyed(masterKey, "token", token)), isNull(emailVerifications.usedAt), gt(emailVerifications.expiresAt, now)))
    .returning();
  return used;
}

/** Whether a link is still open (the confirmation page asks before it uses it). */
export async function emailTokenOpen(db: Executor, masterKey: Buffer, token: string, now: Date): Promise<boolean> {
  const [row] = await db
    .select({ id: emailVerifications.id })
    .from(emailVerifications)
    .where(and(eq(emailVerifications.tokenHash, keyed(masterKey, "token", token)), isNull(emailVerifications.usedAt), gt(emailVerifications.expiresAt, now)));
  return !!row;
}

export async function purgeExpiredEmailVerifications(db: Executor, now: Date): Promise<void> {
  await db.delete(emailVerifications).where(lt(emailVerifications.expiresAt, now));
}
