import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/lib/db/client";
import { startTestInstance, TEST_DB, type TestInstance } from "./harness";

/**
 * PostgreSQL closing Torii's connections (a restart, a failover, an administrator's
 * pg_terminate_backend) does not take the provider down: postgres.js opens new connections for
 * the next statements, and the cache-invalidation listener reconnects on its own.
 *
 * The driver is patched for this (patches/postgres+3.4.9.patch): unpatched, a write that the
 * driver deferred when the socket closed under it crashes the process from an immediate, or
 * leaves that pooled connection unable to send anything again, so its later requests hang.
 */
describe.skipIf(TEST_DB !== "pg")("connections PostgreSQL closes", () => {
  let t: TestInstance;
  beforeAll(async () => {
    // More connections than the default two, so that a kill under load leaves several of them
    // with a write in flight.
    t = await startTestInstance({ IDP_DB_POOL_SIZE: "6" });
  });
  afterAll(() => t.close());

  async function terminateBackends(where = "pid <> pg_backend_pid()"): Promise<number> {
    const admin = new pg.Client({ connectionString: t.config.databaseUrl });
    await admin.connect();
    try {
      const killed = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND ${where}`);
      return killed.rowCount ?? 0;
    } finally {
      await admin.end();
    }
  }

  /** A request that must be answered within a few seconds: a hung connection fails it. */
  const listUsers = () => t.api("/management/v1/users", { signal: AbortSignal.timeout(5_000) });

  it("are replaced: the next requests are answered, and the instance stays ready", async () => {
    expect((await listUsers()).status).toBe(200);
    expect(await terminateBackends()).toBeGreaterThan(0);
    // Statements sent in the moment before a connection has seen its end fail (server_error);
    // those after it go out on new connections.
    await expect.poll(async () => (await listUsers()).status, { timeout: 10_000 }).toBe(200);
    for (let i = 0; i < 5; i++) {
      const res = await listUsers();
      expect(res.status).toBe(200);
      expect((await res.json()).users.map((u: { username: string }) => u.username)).toContain("admin");
    }
    const ready = await fetch(t.baseUrl + "/readyz");
    expect(ready.status).toBe(200);
  });

  it("killed while requests are in flight, leave no connection that hangs", async () => {
    let running = true;
    const answered: number[] = [];
    const load = Array.from({ length: 16 }, async () => {
      while (running) {
        // Failures during the kills are expected; only what comes after is asserted.
        const res = await listUsers().catch(() => undefined);
        if (res) {
          answered.push(res.status);
          await res.body?.cancel();
        }
      }
    });
    for (let round = 0; round < 6; round++) {
      await new Promise((r) => setTimeout(r, 150));
      await terminateBackends("pid <> pg_backend_pid() AND backend_type = 'client backend' AND application_name <> 'psql'");
    }
    running = false;
    await Promise.all(load);
    expect(answered.filter((s) => s === 200).length).toBeGreaterThan(0);

    // Every connection of the pool answers again: more concurrent requests than connections,
    // twice, each within its five seconds.
    await expect.poll(async () => (await listUsers()).status, { timeout: 10_000 }).toBe(200);
    for (let round = 0; round < 2; round++) {
      const statuses = await Promise.all(Array.from({ length: 24 }, async () => {
        const res = await listUsers();
        await res.body?.cancel();
        return res.status;
      }));
      expect(statuses).toEqual(Array(24).fill(200));
    }
  });

  it("fail a statement on a reserved connection that is gone with an error, not a crash", async () => {
    // Migrations and PGlite's vacuum hold one connection (Database.session) for a series of
    // statements; PostgreSQL may end it between two of them.
    const database = openDatabase({ databaseUrl: t.config.databaseUrl, dataDir: t.config.dataDir });
    try {
      const session = await database.session();
      const { pid } = (await session.query<{ pid: number }>("select pg_backend_pid() as pid"))[0]!;
      expect(await terminateBackends(`pid = ${pid}`)).toBe(1);
      // Let the driver see the close before the next statement.
      await new Promise((r) => setTimeout(r, 300));
      await expect(session.query("select 1")).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
      await session.release();
      const again = await database.session();
      expect(await again.query("select 1 as one")).toEqual([{ one: 1 }]);
      await again.release();
    } finally {
      await database.close();
    }
  });
});
