import { PGlite, TransactionAbortedError } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgliteClient } from "@/lib/db/pglite-client";
import { startPgliteThread, type PgliteThread } from "@/lib/db/pglite-thread";

const TABLE = `CREATE TABLE t (id text PRIMARY KEY, n int NOT NULL, at timestamptz, tags text[], doc jsonb)`;

// The client over PGlite on its own thread must answer exactly as PGlite's own query() does (a
// PGlite on this thread, `pg`, with the same table and rows): rows, types, row counts, errors
// with their SQLSTATE; it must survive schema changes and evictions, keep PGlite's transactions,
// and leave this thread free while the database works.
describe("PGlite on its own thread", () => {
  let pg: PGlite;
  let db: PgliteClient;
  let exchanges = 0;

  beforeAll(async () => {
    pg = await PGlite.create();
    const thread = startPgliteThread(undefined, []);
    // Every exchange with the thread, counted.
    const counted: PgliteThread = {
      ...thread,
      exchange: (message, syncToFs) => (exchanges++, thread.exchange(message, syncToFs)),
      group: (statements) => (exchanges++, thread.group(statements)),
    };
    db = new PgliteClient(counted);
    await pg.exec(TABLE);
    await db.exec(TABLE);
  });
  afterAll(async () => {
    await pg.close();
    await db.close();
  });

  it("returns the same rows, fields and counts as PGlite's query()", async () => {
    const at = new Date("2026-01-02T03:04:05.000Z");
    const insert = `INSERT INTO t (id, n, at, tags, doc) VALUES ($1, $2, $3, $4, $5) RETURNING id, n`;
    for (const [id, n] of [["a", 1], ["b", 2]] as const) {
      const mine = await db.query(insert, [id, n, at, ["x", "y"], JSON.stringify({ k: 1 })]);
      const theirs = await pg.query(insert, [id, n, at, ["x", "y"], JSON.stringify({ k: 1 })]);
      expect(mine.rows).toEqual([{ id, n }]);
      expect(mine.rows).toEqual(theirs.rows);
      expect(mine.affectedRows).toBe(theirs.affectedRows);
      expect(mine.fields).toEqual(theirs.fields);
    }

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

  it("binds no parameters, many, NULLs and long multi-byte values as PGlite's query() does", async () => {
    const none = `SELECT count(*)::int AS c FROM t`;
    expect((await db.query(none)).rows).toEqual((await pg.query(none)).rows);
    const values = Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? null : i % 5 === 0 ? "" : `${i}: Grüße 東京 🔑 `.repeat(i % 3 === 0 ? 200 : 1)));
    const many = `SELECT ${values.map((_, i) => `$${i + 1}::text AS c${i}`).join(", ")}`;
    const mine = await db.query(many, values);
    expect(mine.rows).toEqual((await pg.query(many, values)).rows);
    expect(Object.values(mine.rows[0] as Record<string, unknown>)).toEqual(values);
    // The same values in a group with other statements.
    const [grouped] = await Promise.all([db.query(many, values), db.query(none)]);
    expect(grouped.rows).toEqual(mine.rows);
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
    await db.exec(`ALTER TABLE t ADD COLUMN extra text DEFAULT 'e'`);
    expect((await db.query<Record<string, unknown>>(select, ["a"])).rows[0]).toMatchObject({ id: "a", extra: "e" });
  });

  it("keeps answering when more distinct statements run than it keeps prepared", async () => {
    for (let i = 0; i < 300; i++) {
      expect((await db.query<{ v: number }>(`SELECT $1::int + ${i} AS v`, [1])).rows[0]?.v).toBe(i + 1);
    }
    expect((await db.query<{ v: number }>(`SELECT $1::int + 0 AS v`, [5])).rows[0]?.v).toBe(5);
    // Evicted statements are closed: the connection does not accumulate them.
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements`);
    expect(rows[0]!.n).toBeLessThanOrEqual(256);
  });

  it("waits for an open transaction instead of running inside it", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const tx = db.transaction(async (t) => {
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
      await db.exec(`CREATE TABLE g (id text PRIMARY KEY, used boolean NOT NULL DEFAULT false)`);
    });

    // How many exchanges the thread saw while `fn` ran.
    async function exchangesOf<T>(fn: () => Promise<T>): Promise<{ result: T; count: number }> {
      const before = exchanges;
      const result = await fn();
      return { result, count: exchanges - before };
    }

    it("share one exchange, and each gets its own answer in order", async () => {
      const insert = `INSERT INTO g (id) VALUES ($1) RETURNING id`;
      await db.query(insert, ["warm"]); // prepared beforehand, so the count below is the group's own
      const { result, count } = await exchangesOf(() => Promise.all(Array.from({ length: 10 }, (_, i) => db.query<{ id: string }>(insert, [`g${i}`]))));
      expect(result.map((r) => r.rows[0]!.id)).toEqual(Array.from({ length: 10 }, (_, i) => `g${i}`));
      expect(count).toBe(1);
      expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM g WHERE id LIKE 'g%'`)).rows[0]!.n).toBe(10);
    });

    it("sent while the thread is busy, run together in its next exchange: one transaction", async () => {
      const txid = `SELECT txid_current()::text AS id`;
      await db.query(txid);
      const slow = db.query(`SELECT pg_sleep(0.2)`);
      const ids: Promise<string>[] = [];
      // Three turns of the event loop, so three groups, all sent while the sleep runs.
      for (let i = 0; i < 3; i++) {
        await new Promise((r) => setTimeout(r, 10));
        ids.push(db.query<{ id: string }>(txid).then((r) => r.rows[0]!.id));
      }
      await slow;
      expect(new Set(await Promise.all(ids)).size).toBe(1);
      // Once the thread is idle, each group is an exchange and a transaction of its own.
      const a = (await db.query<{ id: string }>(txid)).rows[0]!.id;
      const b = (await db.query<{ id: string }>(txid)).rows[0]!.id;
      expect(a).not.toBe(b);
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
      const other = new PgliteClient(startPgliteThread(undefined, []));
      await other.query(`SELECT 1`);
      const pending = [other.query(`SELECT 1`), other.query(`SELECT 2`)];
      await other.close();
      const settled = await Promise.allSettled(pending);
      expect(settled).toHaveLength(2);
      await expect(other.query(`SELECT 3`)).rejects.toThrow();
    });
  });
});

describe("PGlite's transactions and scripts on its own thread", () => {
  let db: PgliteClient;
  const count = async (id: string) => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM x WHERE id = $1`, [id])).rows[0]!.n;

  beforeAll(async () => {
    db = new PgliteClient(startPgliteThread(undefined, []));
    await db.exec(`CREATE TABLE x (id text PRIMARY KEY)`);
  });
  afterAll(async () => {
    await db.close();
  });

  it("runs a script of several statements and answers each, as PGlite's exec()", async () => {
    const script = `INSERT INTO x VALUES ('s1'); SELECT id FROM x WHERE id = 's1'; UPDATE x SET id = id WHERE false`;
    const reference = await PGlite.create();
    await reference.exec(`CREATE TABLE x (id text PRIMARY KEY)`);
    const theirs = await reference.exec(script);
    await reference.close();
    const results = await db.exec(script);
    expect(results).toEqual(theirs);
    expect(results[1]!.rows).toEqual([{ id: "s1" }]);
    await expect(db.exec(`SELEC 1`)).rejects.toMatchObject({ code: "42601" });
  });

  it("commits a transaction that returns, and answers with what it returned", async () => {
    const value = await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO x VALUES ($1)`, ["c1"]);
      await tx.exec(`INSERT INTO x VALUES ('c2')`);
      return (await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM x WHERE id LIKE 'c%'`)).rows[0]!.n;
    });
    expect(value).toBe(2);
    expect(await count("c1")).toBe(1);
    expect(await count("c2")).toBe(1);
  });

  it("rolls back a transaction that throws, and throws its error on", async () => {
    const failure = db.transaction(async (tx) => {
      await tx.query(`INSERT INTO x VALUES ($1)`, ["r1"]);
      throw new Error("changed my mind");
    });
    await expect(failure).rejects.toThrow("changed my mind");
    expect(await count("r1")).toBe(0);
  });

  it("rolls back when a statement inside fails, with the statement's SQLSTATE", async () => {
    await db.query(`INSERT INTO x VALUES ($1)`, ["dup"]);
    const failure = db.transaction(async (tx) => {
      await tx.query(`INSERT INTO x VALUES ($1)`, ["r2"]);
      await tx.query(`INSERT INTO x VALUES ($1)`, ["dup"]);
    });
    await expect(failure).rejects.toMatchObject({ code: "23505" });
    expect(await count("r2")).toBe(0);
  });

  it("refuses to commit a transaction whose failure was caught inside it", async () => {
    const failure = db.transaction(async (tx) => {
      await tx.query(`INSERT INTO x VALUES ($1)`, ["r3"]);
      await tx.query(`INSERT INTO x VALUES ($1)`, ["dup"]).catch(() => {});
    });
    await expect(failure).rejects.toBeInstanceOf(TransactionAbortedError);
    expect(await count("r3")).toBe(0);
  });

  it("rolls back on request, and refuses statements after it", async () => {
    await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO x VALUES ($1)`, ["r4"]);
      await tx.rollback();
      await expect(tx.query(`SELECT 1`)).rejects.toThrow("Transaction is closed");
      expect(tx.closed).toBe(true);
    });
    expect(await count("r4")).toBe(0);
  });

  it("runs statements asked for during a transaction after it, never inside it", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let seen = -1;
    const tx = db.transaction(async (t) => {
      await t.query(`INSERT INTO x VALUES ($1)`, ["t1"]);
      await held;
    });
    const outside = count("t1").then((n) => (seen = n));
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toBe(-1);
    release();
    await tx;
    await outside;
    expect(seen).toBe(1);
  });

  it("leaves this thread free while the database works", async () => {
    const slow = db.query(`SELECT pg_sleep(0.4)`);
    const started = performance.now();
    await new Promise((r) => setTimeout(r, 20));
    // A timer fires on time although the statement is still running.
    expect(performance.now() - started).toBeLessThan(300);
    await slow;
    expect(performance.now() - started).toBeGreaterThanOrEqual(380);
  });
});

describe("PGlite's thread when it cannot work", () => {
  it("refuses every statement with the reason when the database cannot be opened", async () => {
    const file = `${process.cwd()}/package.json`; // a file, not a folder: nothing can be created in it
    const db = new PgliteClient(startPgliteThread(file, []));
    await expect(db.query(`SELECT 1`)).rejects.toThrow(/embedded database/);
    await expect(db.exec(`SELECT 1`)).rejects.toThrow(/embedded database/);
    await db.close();
  });
});
