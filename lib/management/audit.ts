import { z } from "zod";
import { listAuditEvents } from "@/lib/store/audit-events";
import { named, route } from "./route";

const when = z.iso.datetime({ offset: true }).transform((v) => new Date(v));
const AuditQuery = z.object({
  action: z.string().max(200).optional().describe("Exact action, e.g. client.created."),
  actorId: z.string().max(200).optional(),
  targetId: z.string().max(200).optional(),
  clientId: z.string().max(200).optional(),
  from: when.optional().describe("Inclusive lower bound of occurredAt."),
  to: when.optional().describe("Inclusive upper bound of occurredAt."),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});

const AuditEvent = z.object({
  id: z.number().int(),
  occurredAt: z.iso.datetime(),
  actorType: z.string(),
  actorId: z.string().nullable(),
  action: z.string(),
  targetType: z.string().nullable(),
  targetId: z.string().nullable(),
  clientId: z.string().nullable(),
  ip: z.string().nullable(),
  userAgent: z.string().nullable(),
  details: z.record(z.string(), z.unknown()).nullable(),
});
const AuditList = named(
  "AuditEventList",
  z.object({ events: z.array(AuditEvent), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
);

export const auditRoutes = [
  route({
    method: "GET",
    path: "/audit",
    operationId: "listAuditEvents",
    summary: "The audit log, newest first, paged; every filter given must match.",
    tag: "audit",
    query: AuditQuery,
    success: { status: 200, description: "One page of events.", schema: AuditList },
    async handler(ctx, _body, q) {
      const { events, total } = await listAuditEvents(ctx.db, q);
      return {
        events: events.map((e) => ({ ...e, occurredAt: e.occurredAt.toISOString() })),
        total,
        limit: q.limit,
        offset: q.offset,
      };
    },
  }),
];
