import { getTableColumns, getTableName, is, Param, Placeholder, sql, SQL, StringChunk, type SQLWrapper } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import { resultRows, type Executor } from "@/lib/db/client";

/** What Drizzle builds with placeholders: the text, and its parameters in order. */
type Built = { toSQL(): { sql: string; params: unknown[] } };

/** A parameter of a template: a placeholder filled per call (through its column's encoder), or a value built in. */
type Slot = { name: string; encoder?: { mapToDriverValue(value: unknown): unknown } } | { value: unknown };

type Template = { text: string; slots: Slot[] };

/**
 * Templates by what they are built from (a table and the columns given, or a named statement).
 * Module-level on purpose: a template is derived from the schema and Drizzle's PostgreSQL dialect
 * alone, both fixed in the code, so it is the same for every engine and every database handle.
 */
const templates = new Map<string, Template>();

/**
 * A statement with its text and driver values, ready to send. Building SQL with Drizzle's query
 * builders costs more CPU than PGlite takes to run a simple insert, and the store's writes
 * repeat a handful of shapes: each shape is built once, with placeholders, and filled per call.
 *
 * It can be awaited on its own (`runWrite`, `runGuard`, resolving to the rows it returns) or be
 * joined with others into one statement (`WriteBatch`), which uses `key`, `text` and `params`.
 */
export class Statement implements SQLWrapper, PromiseLike<unknown[]> {
  constructor(
    private readonly db: Executor,
    readonly key: string,
    readonly text: string,
    readonly params: unknown[],
  ) {}

  getSQL(): SQL {
    return textToSql(this.text, this.params);
  }

  then<A = unknown[], B = never>(onFulfilled?: ((rows: unknown[]) => A | PromiseLike<A>) | null, onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): PromiseLike<A | B> {
    return this.db.execute(this.getSQL()).then((r) => resultRows<unknown>(r)).then(onFulfilled, onRejected);
  }
}

/**
 * The statement `build` makes, filled with `values`. `build` receives a function that makes the
 * placeholder for a value's name; `key` names the statement's shape and must change when it does.
 */
export function statement(db: Executor, key: string, build: (p: (name: string) => Placeholder) => Built, values: Record<string, unknown>): Statement {
  return new Statement(db, key, ...filled(templateFor(key, build), values));
}

/** The template for `key`, built (and checked by `check`, which may refuse it) the first time. */
function templateFor(key: string, build: (p: (name: string) => Placeholder) => Built, check?: (t: Template) => void): Template {
  let t = templates.get(key);
  if (!t) {
    t = template(build((name) => sql.placeholder(name)));
    check?.(t);
    templates.set(key, t);
  }
  return t;
}

/**
 * A read prepared once per database handle (Drizzle's `prepare`: built once, and on PostgreSQL a
 * named server-side statement), run with `execute({ …values })`. `key` names it and its shape.
 * The handle's prepared reads live as long as the handle does (a WeakMap on it).
 */
export function preparedRead<Q>(db: Executor, key: string, build: (p: (name: string) => Placeholder, name: string) => Q): Q {
  let reads = preparedReads.get(db);
  if (!reads) {
    reads = new Map();
    preparedReads.set(db, reads);
  }
  let q = reads.get(key) as Q | undefined;
  if (!q) {
    q = build((name) => sql.placeholder(name), `torii_${key.replace(/\W/g, "_")}`);
    reads.set(key, q);
  }
  return q;
}

const preparedReads = new WeakMap<Executor, Map<string, unknown>>();

/**
 * The columns `keys` of `table`, for a select that reads only what its caller uses (each column
 * returned costs the database and the server on every call). The first must be a column that is
 * never null, such as the key: Drizzle makes a left-joined table's object null when its first
 * column is null, which is how a missing row comes back as nothing rather than as empty columns.
 */
export function columnsOf<T extends PgTable, K extends keyof T["_"]["columns"] & string>(table: T, keys: readonly K[]): Pick<T["_"]["columns"], K> {
  const all = getTableColumns(table);
  if (!keys.length || !all[keys[0]!]!.notNull) throw new Error(`columnsOf(${getTableName(table)}): the first column must be one that is never null`);
  return Object.fromEntries(keys.map((k) => [k, all[k]])) as Pick<T["_"]["columns"], K>;
}

/**
 * `INSERT INTO table (…) VALUES (…)` for the columns `row` gives (those it leaves undefined take
 * their defaults, as with Drizzle's own insert).
 */
export function insertRow(db: Executor, table: PgTable, row: Record<string, unknown>): Statement {
  const columns = Object.keys(row).filter((k) => row[k] !== undefined);
  const key = `insert ${getTableName(table)} (${columns.join(",")})`;
  const t = templateFor(
    key,
    (p) => db.insert(table).values(Object.fromEntries(columns.map((c) => [c, p(c)])) as never),
    // A column with a default computed in JavaScript ($defaultFn) would be frozen into the template.
    (built) => {
      if (built.slots.some((slot) => "value" in slot)) throw new Error(`${key}: a column has a JavaScript-side default, which a template cannot hold`);
    },
  );
  return new Statement(db, key, ...filled(t, row));
}

function template(built: Built): Template {
  const { sql: text, params } = built.toSQL();
  const slots: Slot[] = params.map((p) => {
    if (is(p, Placeholder)) return { name: p.name };
    if (is(p, Param) && is(p.value, Placeholder)) return { name: p.value.name, encoder: p.encoder };
    return { value: p };
  });
  return { text, slots };
}

/** The template's text, and its parameters filled from `values`. */
function filled(t: Template, values: Record<string, unknown>): [string, unknown[]] {
  return [t.text, t.slots.map((slot) => {
    if ("value" in slot) return slot.value;
    const v = values[slot.name];
    // As Drizzle does for a value it binds: null stays NULL (a JSON column's encoder would make it 'null').
    if (v === null || v === undefined) return null;
    return slot.encoder ? slot.encoder.mapToDriverValue(v) : v;
  })];
}

/** Statement text with `$1`…`$n` in order, back into Drizzle's SQL (to run on any executor, in a transaction too). */
function textToSql(text: string, params: unknown[]): SQL {
  const pieces = text.split(/\$\d+/);
  // One flat list of text and parameters: Drizzle turns it back into the same text cheaply.
  const chunks: (StringChunk | Param)[] = [new StringChunk(pieces[0]!)];
  for (let i = 1; i < pieces.length; i++) chunks.push(new Param(params[i - 1]), new StringChunk(pieces[i]!));
  return new SQL(chunks);
}
