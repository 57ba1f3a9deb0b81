import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withPreparedStatements } from "@/lib/db/pglite-statements";

// The prepared-statement client must answer exactly as PGlite's own query() does: rows, types,
// row counts, errors with their SQLSTATE, and it must survive schema changes and evictions.
describe("PGlite with prepared statements", () => {
  let pg: PGlite;
  let db: PGlite;

  beforeAll(async () => {
    pg = await PGlite.create();
    db = withPreparedStatements(pg);
    await pg.exec(`CREATE TABLE t (id text PRIMARY KEY, n int NOT NULL, at timestamptz, tags text[], doc jsonb)`);
  });
  afterAll(async () => {
    await pg.close();
  });

  it("returns the same rows, fields and counts as PGlite's query()", async () => {
    const at = new Date("2026-01-02T03:04:05.000Z");
    const insert = `INSERT INTO t (id, n, at, tags, doc) VALUES ($1, $2, $3, $4, $5) RETURNING id, n`;
    const mine = await db.query(insert, ["a", 1, at, ["x", "y"], JSON.stringify({ k: 1 })]);
    const theirs = await pg.query(insert, ["b", 2, at, ["x", "y"], JSON.stringify({ k: 1 })]);
    expect(mine.rows).toEqual([{ id: "a", n: 1 }]);
    expect(mine.affectedRows).toBe(theirs.affectedRows);
    expect(mine.fields).toEqual(theirs.fields);

    const select = `SELECT id, n, at, tags, doc FROM t WHERE id = $1`;
    for (const id of ["a", "b", "a"]) {
      const a = await db.query(select, [id]);
      const b = await pg.query(select, [id]);
      expect(a.rows).toEqual(b.rows);
      expect(a.fields).toEqual(b.fields);
    }
    const arrayMode = await db.query<unknown[]>(select, ["a"], { rowMode: "array" });
    expect(arrayMode.rows[0]?.slice(0, 2)).toEqual(["a", 1]);
    expect((await db.query(select, [null])).rows).toEqual([]);
  });

  it("reads every kind of column as PGlite's query() does: text in any script, NULL, numbers, arrays, JSON, bytes, times", async () => {
    const select = `SELECT $1::text AS t, NULL::text AS n, 42::int8 AS big, 1.5::numeric AS num, 2.25::float8 AS f, true AS b,
      ARRAY['a', NULL, 'ä,"q"']::text[] AS arr, '{"k": ["ü", 1]}'::jsonb AS doc, '\\x00ff'::bytea AS bin,
      '2026-01-02 03:04:05.678+00'::timestamptz AS at, '2026-01-02'::date AS day, '1 day'::interval AS span, ''::text AS empty`;
    for (const value of ["plain", "Grüße, 東京, emoji 🔑", ""]) {
      const mine = await db.query(select, [value]);
      const theirs = await pg.query(select, [value]);
      expect(mine.rows).toEqual(theirs.rows);
      expect(mine.fields).toEqual(theirs.fields);
      const mineArrays = await db.query(select, [value], { rowMode: "array" });
      const theirArrays = await pg.query(select, [value], { rowMode: "array" });
      expect(mineArrays.rows).toEqual(theirArrays.rows);
    }
    const update = `UPDATE t SET n = n WHERE id = ANY($1)`;
    const mine = await db.query(update, [["a", "b", "zz"]]);
    const theirs = await pg.query(update, [["a", "b", "zz"]]);
    expect(mine.affectedRows).toBe(2);
    expect(mine.affectedRows).toBe(theirs.affectedRows);
  });

  it("uses a query's own parsers over PGlite's, for that query only", async () => {
    const select = `SELECT at FROM t WHERE id = $1`;
    const raw = await db.query<{ at: unknown }>(select, ["a"], { parsers: { 1184: (v: string) => `raw:${v}` } });
    expect(raw.rows[0]?.at).toMatch(/^raw:2026-01-02/);
    expect((await db.query<{ at: unknown }>(select, ["a"])).rows[0]?.at).toBeInstanceOf(Date);
  });

  it("reports a database error with its SQLSTATE and keeps working after it", async () => {
    const insert = `INSERT INTO t (id, n) VALUES ($1, $2)`;
    await expect(db.query(insert, ["a", 3])).rejects.toMatchObject({ code: "23505" });
    await expect(db.query(`SELECT 1 / $1::int AS x`, [0])).rejects.toMatchObject({ code: "22012" });
    await expect(db.query(`SELEC nonsense`)).rejects.toMatchObject({ code: "42601" });
    expect((await db.query(`SELECT 1 / $1::int AS x`, [1])).rows).toEqual([{ x: 1 }]);
  });

  it("prepares a statement again when the schema under it changed", async () => {
    const select = `SELECT * FROM t WHERE id = $1`;
    expect(Object.keys((await db.query<Record<string, unknown>>(select, ["a"])).rows[0]!)).not.toContain("extra");
    await pg.exec(`ALTER TABLE t ADD COLUMN extra text DEFAULT 'e'`);
    expect((await db.query<Record<string, unknown>>(select, ["a"])).rows[0]).toMatchObject({ id: "a", extra: "e" });
  });

  it("keeps answering when more distinct statements run than it keeps prepared", async () => {
    for (let i = 0; i < 300; i++) {
      expect((await db.query<{ v: number }>(`SELECT $1::int + ${i} AS v`, [1])).rows[0]?.v).toBe(i + 1);
    }
    expect((await db.query<{ v: number }>(`SELECT $1::int + 0 AS v`, [5])).rows[0]?.v).toBe(5);
    // Evicted statements are closed: the connection does not accumulate them.
    const { rows } = await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements`);
    expect(rows[0]!.n).toBeLessThanOrEqual(256);
  });

  it("waits for an open transaction instead of running inside it", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const tx = pg.transaction(async (t) => {
      await t.query(`INSERT INTO t (id, n) VALUES ('tx', 9)`);
      await held;
      throw new Error("roll back");
    });
    const outside = db.query<{ n: number }>(`SELECT count(*)::int AS n FROM t WHERE id = $1`, ["tx"]);
    release();
    await expect(tx).rejects.toThrow("roll back");
    expect((await outside).rows[0]!.n).toBe(0);
  });

  describe("statements asked for in the same turn", () => {
    beforeAll(async () => {
      await pg.exec(`CREATE TABLE g (id text PRIMARY KEY, used boolean NOT NULL DEFAULT false)`);
    });

    // How many exchanges PGlite saw while `fn` ran (one per execProtocol call).
    async function exchanges<T>(fn: () => Promise<T>): Promise<{ result: T; count: number }> {
      // Every exchange goes through one of these two.
      const original = { execProtocol: pg.execProtocol.bind(pg), execProtocolRawStream: pg.execProtocolRawStream.bind(pg) };
      let count = 0;
      pg.execProtocol = (...args: Parameters<PGlite["execProtocol"]>) => (count++, original.execProtocol(...args));
      pg.execProtocolRawStream = (...args: Parameters<PGlite["execProtocolRawStream"]>) => (count++, original.execProtocolRawStream(...args));
      try {
        return { result: await fn(), count };
      } finally {
        Object.assign(pg, original);
      }
    }

    it("share one exchange, and each gets its own answer in order", async () => {
      const insert = `INSERT INTO g (id) VALUES ($1) RETURNING id`;
      await db.query(insert, ["warm"]); // prepared beforehand, so the count below is the group's own
      const { result, count } = await exchanges(() => Promise.all(Array.from({ length: 10 }, (_, i) => db.query<{ id: string }>(insert, [`g${i}`]))));
      expect(result.map((r) => r.rows[0]!.id)).toEqual(Array.from({ length: 10 }, (_, i) => `g${i}`));
      expect(count).toBe(1);
      expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM g WHERE id LIKE 'g%'`)).rows[0]!.n).toBe(10);
    });

    it("run in the order asked: a guard taken by an earlier one is lost to a later one", async () => {
      await db.query(`INSERT INTO g (id) VALUES ($1)`, ["code"]);
      const take = `UPDATE g SET used = true WHERE id = $1 AND NOT used RETURNING id`;
      const [first, second] = await Promise.all([db.query(take, ["code"]), db.query(take, ["code"])]);
      expect(first.rows).toEqual([{ id: "code" }]);
      expect(second.rows).toEqual([]);
    });

    it("keep the others' writes when one fails, and give the failing one its own error", async () => {
      const insert = `INSERT INTO g (id) VALUES ($1)`;
      const results = await Promise.allSettled([db.query(insert, ["ok1"]), db.query(insert, ["ok1"]), db.query(insert, ["ok2"]), db.query(`SELECT 1 / $1::int AS x`, [0])]);
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "rejected"]);
      expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: "23505" });
      expect((results[3] as PromiseRejectedResult).reason).toMatchObject({ code: "22012" });
      const { rows } = await db.query<{ id: string }>(`SELECT id FROM g WHERE id LIKE 'ok%' ORDER BY id`);
      expect(rows.map((r) => r.id)).toEqual(["ok1", "ok2"]);
    });

    it("answer an empty statement alongside the others", async () => {
      const [empty, one] = await Promise.all([db.query(""), db.query<{ x: number }>(`SELECT $1::int AS x`, [1])]);
      expect(empty.rows).toEqual([]);
      expect(one.rows).toEqual([{ x: 1 }]);
    });

    it("are all answered or refused when PGlite closes, none left waiting; later ones are refused", async () => {
      const other = withPreparedStatements(await PGlite.create());
      await other.query(`SELECT 1`);
      const pending = [other.query(`SELECT 1`), other.query(`SELECT 2`)];
      await other.close();
      const settled = await Promise.allSettled(pending);
      expect(settled).toHaveLength(2);
      await expect(other.query(`SELECT 3`)).rejects.toThrow();
    });
  });
});
