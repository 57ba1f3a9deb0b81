import { and, eq, gt, isNull, lt } from "drizzle-orm";
import { passwordResets } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { randomToken, sha256 } from "@/lib/crypto";

export type PasswordReset = typeof passwordResets.$inferSelect;

/** Stores a reset link's token (256 random bits unless given) by its hash only; returns the token. */
export async function createPasswordReset(db: Executor, userId: string, lifetimeSeconds: number, now: Date, token = randomToken(32)): Promise<string> {
  await db.insert(passwordResets).values({ tokenHash: sha256(token), userId, expiresAt: new Date(now.getTime() + lifetimeSeconds * 1000), createdAt: now });
  return token;
}

/** The reset a token names, while it is unused and unexpired. */
export async function findPasswordReset(db: Executor, token: string, now: Date): Promise<PasswordReset | undefined> {
  const [row] = await db
    .select()
    .from(passwordResets)
    .where(and(eq(passwordResets.tokenHash, sha256(token)), isNull(passwordResets.usedAt), gt(passwordResets.expiresAt, now)));
  return row;
}

/** Uses the token once: true for exactly one caller while it is valid. */
export async function consumePasswordReset(db: Executor, token: string, now: Date): Promise<PasswordReset | undefined> {
  const [row] = await db
    .update(passwordResets)
    .set({ usedAt: now })
    .where(and(eq(passwordResets.tokenHash, sha256(token)), isNull(passwordResets.usedAt), gt(passwordResets.expiresAt, now)))
    .returning();
  return row;
}

/** Every other open link of the user stops working once one was used (or the password set otherwise). */
export async function retirePasswordResets(db: Executor, userId: string, now: Date): Promise<void> {
  await db.update(passwordResets).set({ usedAt: now }).where(and(eq(passwordResets.userId, userId), isNull(passwordResets.usedAt)));
}

export async function purgeExpiredPasswordResets(db: Executor, now: Date): Promise<void> {
  await db.delete(passwordResets).where(lt(passwordResets.expiresAt, now));
}
