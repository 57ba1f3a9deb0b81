import { and, count, desc, eq, gte, lte, or } from "drizzle-orm";
import { auditEvents } from "@/db/schema";
import type { Executor } from "@/lib/db/client";

export type AuditRow = typeof auditEvents.$inferSelect;

export type AuditFilter = {
  action?: string;
  actorId?: string;
  targetId?: string;
  /** Events the user did or that were done to the user (the account page's security events). */
  involving?: string;
  clientId?: string;
  from?: Date;
  to?: Date;
  limit: number;
  offset: number;
};

/** Audit events matching every given filter, newest first, one page at a time. */
export async function listAuditEvents(db: Executor, f: AuditFilter): Promise<{ events: AuditRow[]; total: number }> {
  const conds = [
    f.action ? eq(auditEvents.action, f.action) : undefined,
    f.actorId ? eq(auditEvents.actorId, f.actorId) : undefined,
    f.targetId ? eq(auditEvents.targetId, f.targetId) : undefined,
    f.involving ? or(eq(auditEvents.actorId, f.involving), eq(auditEvents.targetId, f.involving)) : undefined,
    f.clientId ? eq(auditEvents.clientId, f.clientId) : undefined,
    f.from ? gte(auditEvents.occurredAt, f.from) : undefined,
    f.to ? lte(auditEvents.occurredAt, f.to) : undefined,
  ].filter((c) => c !== undefined);
  const where = conds.length ? and(...conds) : undefined;
  const [events, [total]] = await Promise.all([
    db
      .select()
      .from(auditEvents)
      .where(where)
      .orderBy(desc(auditEvents.occurredAt), desc(auditEvents.id))
      .limit(f.limit)
      .offset(f.offset),
    db.select({ n: count() }).from(auditEvents).where(where),
  ]);
  return { events, total: total?.n ?? 0 };
}
