import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestInstance, TEST_DB, type TestInstance } from "./harness";

/**
 * PostgreSQL closing Torii's connections (a restart, a failover, an administrator's
 * pg_terminate_backend) does not take the provider down: postgres.js opens new connections for
 * the next statements, and the cache-invalidation listener reconnects on its own.
 */
describe.skipIf(TEST_DB !== "pg")("connections PostgreSQL closes", () => {
  let t: TestInstance;
  beforeAll(async () => {
    t = await startTestInstance();
  });
  afterAll(() => t.close());

  it("are replaced: the next requests are answered, and the instance stays ready", async () => {
    expect((await t.api("/management/v1/users")).status).toBe(200);
    const admin = new pg.Client({ connectionString: t.config.databaseUrl });
    await admin.connect();
    try {
      const killed = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
      expect(killed.rowCount).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    // Statements sent in the moment before a connection has seen its end fail (server_error);
    // those after it go out on new connections.
    await expect.poll(async () => (await t.api("/management/v1/users")).status, { timeout: 10_000 }).toBe(200);
    for (let i = 0; i < 5; i++) {
      const res = await t.api("/management/v1/users");
      expect(res.status).toBe(200);
      expect((await res.json()).users.map((u: { username: string }) => u.username)).toContain("admin");
    }
    const ready = await fetch(t.baseUrl + "/readyz");
    expect(ready.status).toBe(200);
  });
});
