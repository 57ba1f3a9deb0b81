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

/**
 * The two statements of one page of the audit log: the page (newest first) and how many events
 * match in all. Built apart from running them so that a test can ask the database how it would
 * run them (test/audit-log.test.ts: each filter is served by an index, not a scan of the log).
 */
export function auditEventQueries(db: Executor, f: AuditFilter) {
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
  return {
    page: db
      .select()
      .from(auditEvents)
      .where(where)
      .orderBy(desc(auditEvents.occurredAt), desc(auditEvents.id))
      .limit(f.limit)
      .offset(f.offset),
    total: db.select({ n: count() }).from(auditEvents).where(where),
  };
}

/** Audit events matching every given filter, newest first, one page at a time. */
export async function listAuditEvents(db: Executor, f: AuditFilter): Promise<{ events: AuditRow[]; total: number }> {
  const q = auditEventQueries(db, f);
  const [events, [total]] = await Promise.all([q.page, q.total]);
  return { events, total: total?.n ?? 0 };
}
