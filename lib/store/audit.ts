import { auditEvents } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { insertRow } from "./statement";
import { runWrite, type Write } from "./write";

/** Who caused a change and from where; every state change records one audit event with it. */
export type Actor = {
  type: "user" | "client" | "system";
  id?: string | null;
  ip?: string | null;
  userAgent?: string | null;
};

export const SYSTEM: Actor = { type: "system", id: null };

export type AuditEvent = {
  action: string;
  targetType?: string;
  targetId?: string | null;
  clientId?: string | null;
  details?: Record<string, unknown>;
};

export function recordAuditWrite(db: Executor, actor: Actor, event: AuditEvent): Write<void> {
  return {
    query: insertRow(db, auditEvents, {
      actorType: actor.type,
      actorId: actor.id ?? null,
      ip: actor.ip ?? null,
      userAgent: actor.userAgent?.slice(0, 512) ?? null,
      action: event.action,
      targetType: event.targetType ?? null,
      targetId: event.targetId ?? null,
      clientId: event.clientId ?? null,
      details: event.details ?? null,
    }),
    result: undefined,
  };
}

export function recordAudit(db: Executor, actor: Actor, event: AuditEvent): Promise<void> {
  return runWrite(recordAuditWrite(db, actor, event));
}
