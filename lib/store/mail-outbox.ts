import { and, desc, eq, inArray, lt, lte, sql } from "drizzle-orm";
import { mailOutbox } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { randomId } from "@/lib/crypto";

export type OutboxMail = typeof mailOutbox.$inferSelect;
export type NewMail = { to: string; subject: string; text: string; html: string; template: string; userId?: string | null };
export type MailState = "queued" | "sent" | "failed" | "held";

/** Records a mail: `queued` to be sent at once, or `held` when no mail server is configured. */
export async function enqueueMail(db: Executor, mail: NewMail, state: "queued" | "held", now: Date): Promise<OutboxMail> {
  const [row] = await db
    .insert(mailOutbox)
    .values({ id: randomId(), ...mail, userId: mail.userId ?? null, state, nextAttemptAt: state === "queued" ? now : null, createdAt: now })
    .returning();
  return row!;
}

/**
 * Takes up to `limit` mails that are due (queued, or failed with a retry time that has come) and
 * leases them for `leaseSeconds`, counting the attempt: two workers never send the same mail, and
 * one that dies while sending leaves it to be tried again once the lease runs out.
 */
export async function claimDueMails(db: Executor, now: Date, limit = 10, leaseSeconds = 120): Promise<OutboxMail[]> {
  const due = db
    .select({ id: mailOutbox.id })
    .from(mailOutbox)
    .where(and(inArray(mailOutbox.state, ["queued", "failed"]), lte(mailOutbox.nextAttemptAt, now)))
    .orderBy(mailOutbox.nextAttemptAt)
    .limit(limit)
    .for("update", { skipLocked: true });
  return db
    .update(mailOutbox)
    .set({ nextAttemptAt: new Date(now.getTime() + leaseSeconds * 1000), attempts: sql`${mailOutbox.attempts} + 1` })
    .where(inArray(mailOutbox.id, due))
    .returning();
}

/**
 * Leases one mail if it is due, like `claimDueMails`: the caller that gets it back is the only
 * one sending it (the console's test mail, sent at once, is not also sent by the delivery pass
 * that runs at the same moment, nor twice by two calls).
 */
export async function claimMail(db: Executor, id: string, now: Date, leaseSeconds = 120): Promise<OutboxMail | undefined> {
  const [row] = await db
    .update(mailOutbox)
    .set({ nextAttemptAt: new Date(now.getTime() + leaseSeconds * 1000), attempts: sql`${mailOutbox.attempts} + 1` })
    .where(and(eq(mailOutbox.id, id), inArray(mailOutbox.state, ["queued", "failed"]), lte(mailOutbox.nextAttemptAt, now)))
    .returning();
  return row;
}

export async function markMailSent(db: Executor, id: string, now: Date): Promise<void> {
  await db.update(mailOutbox).set({ state: "sent", sentAt: now, nextAttemptAt: null, lastError: null }).where(eq(mailOutbox.id, id));
}

/** A failed try: `retryAt` null when the attempts are used up (the mail stays `failed`). */
export async function markMailFailed(db: Executor, id: string, error: string, retryAt: Date | null): Promise<void> {
  await db.update(mailOutbox).set({ state: "failed", lastError: error.slice(0, 1000), nextAttemptAt: retryAt }).where(eq(mailOutbox.id, id));
}

/** The outbox, newest first; `before` pages on by creation time; `to` is an address, in any case. */
export async function listOutbox(db: Executor, opts: { limit: number; before?: Date; to?: string }): Promise<OutboxMail[]> {
  const conds = [opts.before ? lt(mailOutbox.createdAt, opts.before) : undefined, opts.to ? sql`lower(${mailOutbox.to}) = ${opts.to.toLowerCase()}` : undefined].filter(Boolean);
  return db
    .select()
    .from(mailOutbox)
    .where(conds.length ? and(...conds) : undefined)
    .orderBy(desc(mailOutbox.createdAt), desc(mailOutbox.id))
    .limit(opts.limit);
}

export async function getOutboxMail(db: Executor, id: string): Promise<OutboxMail | undefined> {
  const [row] = await db.select().from(mailOutbox).where(eq(mailOutbox.id, id));
  return row;
}

/** Mails older than the cut-off go (the sweep, with the audit retention). */
export async function purgeOutbox(db: Executor, before: Date): Promise<void> {
  await db.delete(mailOutbox).where(lt(mailOutbox.createdAt, before));
}
