import { and, eq, isNull, sql } from "drizzle-orm";
import { jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { drizzle } from "drizzle-orm/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PreparedTexts, type Executor } from "@/lib/db/client";
import { PgliteClient } from "@/lib/db/pglite-client";
import { startPgliteThread } from "@/lib/db/pglite-thread";
import { columnsOf, insertRow, statement } from "@/lib/store/statement";
import { runGuard, runWrite, WriteBatch, isGuardLost } from "@/lib/store/write";

const things = pgTable("things", {
  id: text("id").primaryKey(),
  label: text("label").notNull().default("unnamed"),
  tags: text("tags").array().notNull().default(sql`'{}'::text[]`),
  doc: jsonb("doc").$type<Record<string, unknown> | null>(),
  at: timestamp("at", { withTimezone: true, mode: "date" }),
  usedAt: timestamp("used_at", { withTimezone: true, mode: "date" }),
});
const withJsDefault = pgTable("things", { id: text("id").primaryKey().$defaultFn(() => "made-in-js") });

// Statements built once per shape and filled per call must write what Drizzle's own builders
// would: defaults for columns left out, NULL (not JSON null) for null, encoded dates and arrays.
describe("store statements from templates", () => {
  let pg: PgliteClient;
  let db: Executor;
  let send: (text: string, params: unknown[]) => Promise<unknown>;
  const read = async (id: string) => (await db.select().from(things).where(eq(things.id, id)))[0];
  const markUsed = (id: string, now: Date) =>
    statement(
      db,
      "test.markUsed",
      (p) => db.update(things).set({ usedAt: sql`${p("now")}::timestamptz` }).where(and(eq(things.id, p("id")), isNull(things.usedAt))).returning({ id: things.id }),
      { id, now: now.toISOString() },
    );

  beforeAll(async () => {
    pg = new PgliteClient(startPgliteThread(undefined, []));
    await pg.exec(`CREATE TABLE things (id text PRIMARY KEY, label text NOT NULL DEFAULT 'unnamed', tags text[] NOT NULL DEFAULT '{}', doc jsonb, at timestamptz, used_at timestamptz)`);
    db = drizzle(pg as never) as unknown as Executor;
    send = (text, params) => pg.query(text, params);
  });
  afterAll(async () => {
    await pg.close();
  });

  it("inserts the columns given, with defaults for those left undefined, and NULL for null", async () => {
    const at = new Date("2026-03-04T05:06:07.000Z");
    await runWrite({ query: insertRow(db, things, { id: "a", tags: ["x", "y,z"], doc: { k: [1] }, at }), result: undefined });
    await runWrite({ query: insertRow(db, things, { id: "b", label: undefined, doc: null }), result: undefined });
    // Same shape as "a", other values: the template is reused and filled anew.
    await runWrite({ query: insertRow(db, things, { id: "c", tags: [], doc: { k: 2 }, at: new Date(0) }), result: undefined });
    expect(await read("a")).toEqual({ id: "a", label: "unnamed", tags: ["x", "y,z"], doc: { k: [1] }, at, usedAt: null });
    expect(await read("b")).toEqual({ id: "b", label: "unnamed", tags: [], doc: null, at: null, usedAt: null });
    expect((await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM things WHERE doc IS NULL`)).rows[0]!.n).toBe(1);
    expect(await read("c")).toMatchObject({ tags: [], doc: { k: 2 }, at: new Date(0) });
  });

  it("answers a guard once: the first caller wins, later ones see no row", async () => {
    const now = new Date("2026-05-06T07:08:09.000Z");
    expect(await runGuard({ guard: markUsed("a", now) })).toBe(true);
    expect(await runGuard({ guard: markUsed("a", now) })).toBe(false);
    expect((await read("a"))?.usedAt).toEqual(now);
  });

  it("sends a batch as one statement with its parameters numbered on, all or nothing", async () => {
    const ok = new WriteBatch();
    await ok.add({ query: insertRow(db, things, { id: "d", label: "dee" }), result: undefined });
    await ok.guard({ guard: markUsed("b", new Date()) });
    await ok.add({ query: insertRow(db, things, { id: "e", tags: ["t"], doc: { e: true } }), result: undefined });
    await ok.flush(send);
    expect(await read("d")).toMatchObject({ label: "dee" });
    expect(await read("e")).toMatchObject({ tags: ["t"], doc: { e: true } });
    expect((await read("b"))?.usedAt).toBeInstanceOf(Date);

    // "b" is used now: the guard loses, and the insert before it is undone with it.
    const lost = new WriteBatch();
    await lost.add({ query: insertRow(db, things, { id: "f", label: "eff" }), result: undefined });
    await lost.guard({ guard: markUsed("b", new Date()) });
    const err = await lost.flush(send).then(() => undefined, (e: unknown) => e);
    expect(isGuardLost(err)).toBe(true);
    expect(await read("f")).toBeUndefined();
  });

  it("refuses a table whose columns have JavaScript-side defaults, which a template would freeze", () => {
    expect(() => insertRow(db, withJsDefault, {})).toThrow(/JavaScript-side default/);
  });
});

describe("the batched statements prepared on PostgreSQL", () => {
  it("prepares each text for good, and sends texts past the cap unprepared", () => {
    const texts = new PreparedTexts(2);
    expect(texts.admit("SELECT 1")).toBe(true);
    expect(texts.admit("SELECT 2")).toBe(true);
    expect(texts.admit("SELECT 1")).toBe(true);
    expect(texts.admit("SELECT 3")).toBe(false);
    expect(texts.admit("SELECT 2")).toBe(true);
  });
});

// A left-joined table's object is null only when its first column is: a column that may be null
// first would make a row that exists read as missing, so columnsOf refuses it.
describe("columnsOf", () => {
  it("gives the columns asked for, and refuses a first column that may be null", () => {
    expect(Object.keys(columnsOf(things, ["id", "doc", "at"]))).toEqual(["id", "doc", "at"]);
    expect(columnsOf(things, ["label"]).label).toBe(things.label);
    expect(() => columnsOf(things, ["doc", "id"])).toThrow(/first column must be one that is never null/);
    expect(() => columnsOf(things, [])).toThrow(/first column/);
  });
});
