import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordAudit } from "@/lib/store/audit";
import { auditEventQueries, listAuditEvents, type AuditFilter } from "@/lib/store/audit-events";
import { startTestInstance, type TestInstance } from "./harness";
import { indexLookup, planWithoutScans } from "./query-plan";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

describe("audit log reads", () => {
  const page = { limit: 20, offset: 0 };

  // Each filter's columns are looked up in an index (an "Index Cond" on them), not checked row by
  // row while walking some other index whole, which is a scan of the log by another name.
  it.each<[string, Omit<AuditFilter, "limit" | "offset">, string[]]>([
    ["one user's events (the account page)", { involving: "user-x" }, ["actor_id", "target_id"]],
    ["an actor's events (the console)", { actorId: "user-x" }, ["actor_id"]],
    ["a target's events (the console)", { targetId: "user-x" }, ["target_id"]],
    ["an action's events (the console)", { action: "user.signed_in" }, ["action"]],
    ["a client's events (the console)", { clientId: "web-x" }, ["client_id"]],
  ])("finds %s through an index, page and count, instead of scanning every event kept", async (_, filter, columns) => {
    const q = auditEventQueries(t.inst.db, { ...filter, ...page });
    for (const statement of [q.page, q.total]) {
      const plan = await planWithoutScans(t.inst.db, statement);
      expect(plan).not.toMatch(/Seq Scan on audit_events/);
      for (const column of columns) expect(plan).toMatch(indexLookup(column));
    }
  });

  it("gives a user's events, whether the user acted or was acted on, and no one else's", async () => {
    const [me, other] = [`u-${crypto.randomUUID()}`, `u-${crypto.randomUUID()}`];
    await recordAudit(t.inst.db, { type: "user", id: me }, { action: "user.signed_in", targetType: "user", targetId: me });
    await recordAudit(t.inst.db, { type: "user", id: other }, { action: "user.locked", targetType: "user", targetId: me });
    await recordAudit(t.inst.db, { type: "user", id: me }, { action: "oauth.authorized", targetType: "grant", targetId: "g-1" });
    await recordAudit(t.inst.db, { type: "user", id: other }, { action: "user.signed_in", targetType: "user", targetId: other });
    const mine = await listAuditEvents(t.inst.db, { involving: me, ...page });
    expect(mine.total).toBe(3);
    expect(mine.events.map((e) => e.action).sort()).toEqual(["oauth.authorized", "user.locked", "user.signed_in"]);
    const byActor = await listAuditEvents(t.inst.db, { actorId: other, ...page });
    expect(byActor.events.map((e) => e.action).sort()).toEqual(["user.locked", "user.signed_in"]);
    const byTarget = await listAuditEvents(t.inst.db, { targetId: me, ...page });
    expect(byTarget.events.map((e) => e.action).sort()).toEqual(["user.locked", "user.signed_in"]);
  });
});
