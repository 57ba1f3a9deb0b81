import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@/lib/db/client";
import { migrate } from "@/lib/db/migrate";
import { tablesDue, vacuumMostDue } from "@/lib/db/pglite-vacuum";
import { startTestInstance, TEST_DB } from "./harness";

// PGlite has no autovacuum (single-user mode); Torii's sweep stands in for it. These run on an
// embedded database of their own whatever TORII_TEST_DB says: on PostgreSQL the server's own
// autovacuum does the work, and the function must leave it alone.
let db: Database;
beforeAll(async () => {
  db = openDatabase({ dataDir: os.tmpdir(), inMemory: true });
  await migrate(db);
}, 60_000);
afterAll(() => db.close());

type Stat = { last_vacuum: Date | null; last_analyze: Date | null; n_dead_tup: number };
const stat = async (table: string): Promise<Stat> =>
  (await db.query("SELECT last_vacuum, last_analyze, n_dead_tup::int FROM pg_stat_user_tables WHERE relname = $1", [table]))[0] as Stat;

/** PostgreSQL reports a backend's table statistics at most once a second, when it goes idle. */
async function flushStatistics() {
  await db.query("SELECT pg_stat_force_next_flush()", []);
  await db.query("SELECT 1", []);
}

/** Vacuums until nothing is due, as successive sweeps would; returns what was done, in order. */
async function sweepUntilQuiet(opts: { freezeMaxAge?: number } = {}) {
  const done = [];
  for (let i = 0; i < 500; i++) {
    await flushStatistics();
    const d = await vacuumMostDue(db, opts);
    if (!d) return done;
    done.push(d);
  }
  throw new Error("still due after 500 sweeps");
}

describe("vacuum on the embedded database", () => {
  it("vacuums a table with dead rows past autovacuum's threshold, and only once", async () => {
    await sweepUntilQuiet(); // what the migrations left
    await db.query("INSERT INTO used_jtis (issuer, jti, expires_at) SELECT 'c', 'j' || g, now() FROM generate_series(1, 400) g", []);
    await sweepUntilQuiet();
    const before = await stat("used_jtis");
    // 300 dead of 400: past 50 + 20 % of the table.
    await db.query("DELETE FROM used_jtis WHERE jti <> ALL (SELECT 'j' || g FROM generate_series(1, 100) g)", []);
    await flushStatistics();
    expect(await tablesDue(db)).toContainEqual({ table: "public.used_jtis", action: "vacuum", reason: "dead rows" });
    const done = await vacuumMostDue(db);
    expect(done).toEqual({ table: "public.used_jtis", action: "vacuum", reason: "dead rows" });
    const after = await stat("used_jtis");
    expect(after.n_dead_tup).toBe(0);
    expect(after.last_vacuum!.getTime()).toBeGreaterThan(before.last_vacuum?.getTime() ?? 0);
    // One command a sweep: the 300 changed rows are analysed by the next.
    await flushStatistics();
    expect(await vacuumMostDue(db)).toEqual({ table: "public.used_jtis", action: "analyze", reason: "changes" });
    expect((await stat("used_jtis")).last_analyze!.getTime()).toBeGreaterThan(before.last_analyze?.getTime() ?? 0);
    await flushStatistics();
    expect((await tablesDue(db)).map((d) => d.table)).not.toContain("public.used_jtis");
  });

  it("leaves a table alone below the thresholds", async () => {
    await sweepUntilQuiet();
    const before = await stat("used_jtis");
    await db.query("DELETE FROM used_jtis WHERE jti IN ('j1', 'j2', 'j3')", []);
    await flushStatistics();
    expect(await vacuumMostDue(db)).toBeUndefined();
    expect((await stat("used_jtis")).last_vacuum).toEqual(before.last_vacuum);
  });

  it("only analyses a table whose rows changed in place, past the analyse threshold but not the vacuum one", async () => {
    await db.query("INSERT INTO used_jtis (issuer, jti, expires_at) SELECT 'd', 'k' || g, now() FROM generate_series(1, 1000) g", []);
    await sweepUntilQuiet();
    const before = await stat("used_jtis");
    // About 1,100 rows, 200 updated: past 50 + 10 % changed (ANALYZE), not past 50 + 20 % dead (VACUUM).
    await db.query("UPDATE used_jtis SET expires_at = now() + interval '1 hour' WHERE issuer = 'd' AND jti IN (SELECT 'k' || g FROM generate_series(1, 200) g)", []);
    await flushStatistics();
    expect(await vacuumMostDue(db)).toEqual({ table: "public.used_jtis", action: "analyze", reason: "changes" });
    const after = await stat("used_jtis");
    expect(after.last_analyze!.getTime()).toBeGreaterThan(before.last_analyze!.getTime());
    expect(after.last_vacuum).toEqual(before.last_vacuum);
    expect(after.n_dead_tup).toBeGreaterThanOrEqual(200);
  });

  it("freezes every table, catalogs included, once their oldest row passes the freeze age", async () => {
    await sweepUntilQuiet();
    const oldest = async () => ((await db.query("SELECT max(age(relfrozenxid))::int AS a FROM pg_class WHERE relkind IN ('r', 'm') AND relpersistence = 'p'", [])) as { a: number }[])[0]!.a;
    // A thousand transactions, each taking a transaction id, age every table's oldest row.
    for (let i = 0; i < 1000; i++) await db.query("SELECT txid_current()", []);
    const xidsBefore = await oldest();
    expect(xidsBefore).toBeGreaterThan(1000);
    // The server's freeze settings, scaled down as the freeze age is below: a VACUUM then freezes
    // every row, as one past vacuum_freeze_table_age (150 million) freezes those older than 50 million.
    const s = await db.session();
    await s.exec("SET vacuum_freeze_min_age = 0; SET vacuum_freeze_table_age = 0");
    await s.release();
    // With a freeze age of 500 transactions every table is overdue: each is vacuumed once, the
    // database's horizon moves, and nothing is left due.
    const done = await sweepUntilQuiet({ freezeMaxAge: 500 });
    // Each table once for its age (pg_statistic may come back for the dead rows the analyses left).
    const frozen = done.filter((d) => d.reason === "wraparound").map((d) => d.table);
    expect(done.every((d) => d.action === "vacuum" && (d.reason === "wraparound" || d.table === "pg_catalog.pg_statistic"))).toBe(true);
    expect(frozen).toEqual(expect.arrayContaining(["pg_catalog.pg_class", "information_schema.sql_features", "public.tokens", "public.users"]));
    expect(new Set(frozen).size).toBe(frozen.length);
    expect(await oldest()).toBeLessThan(500);
    const datAge = ((await db.query("SELECT age(datfrozenxid)::int AS a FROM pg_database WHERE datname = current_database()", [])) as { a: number }[])[0]!.a;
    expect(datAge).toBeLessThan(500);
  });

  it("does nothing on PostgreSQL, whose own autovacuum runs", async () => {
    const pg = { kind: "pg", query: () => Promise.reject(new Error("no statement expected")), session: () => Promise.reject(new Error("no session expected")) } as unknown as Database;
    expect(await vacuumMostDue(pg)).toBeUndefined();
  });
});

// The engine's sweep (every 6 s with the shortest key rotation interval, 60 s) does it on its own.
it.skipIf(TEST_DB === "pg")("the maintenance sweep of a running instance vacuums its tables", { timeout: 60_000 }, async () => {
  const t = await startTestInstance({ IDP_KEY_ROTATION_INTERVAL: "60" });
  try {
    const q = (text: string) => t.inst.database.query(text, []);
    await q("INSERT INTO used_jtis (issuer, jti, expires_at) SELECT 'c', 'j' || g, now() FROM generate_series(1, 400) g");
    await q("DELETE FROM used_jtis");
    const vacuumed = async () => ((await q("SELECT last_vacuum FROM pg_stat_user_tables WHERE relname = 'used_jtis'")) as { last_vacuum: Date | null }[])[0]!.last_vacuum;
    const deadline = Date.now() + 45_000;
    while (!(await vacuumed()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    expect(await vacuumed()).toBeInstanceOf(Date);
  } finally {
    await t.close();
  }
});
