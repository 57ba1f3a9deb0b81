import { messages, parse, protocol, type QueryOptions, type Results } from "@electric-sql/pglite";
import { bindAndExecute, readAnswers, resultOfAnswer, type Parser } from "./pglite-wire";

/** A message PGlite's own reader made of an answer. */
type BackendMessage = Parameters<typeof parse.parseResults>[0][number];

/** How many statements stay prepared; the least recently used one is closed past this. */
const MAX_STATEMENTS = 256;

// SQLSTATEs that mean a prepared statement no longer fits the schema or is gone (after a
// migration, say): prepared again once, the statement runs as it would have unprepared.
const STALE_STATEMENT = new Set(["0A000", "26000"]);

type Prepared = {
  name: string;
  paramTypes: number[];
  /** The columns it returns, as PGlite's results name them (none for a statement without rows). */
  fields: { name: string; dataTypeID: number }[];
};

/** At most this many statements share one exchange. */
export const MAX_GROUP = 64;

type Serializer = (value: unknown) => string;

/** What the statements run on: the database's exchange of wire messages, and its type converters. */
export interface StatementHost {
  exchange(message: Uint8Array, syncToFs: boolean): Promise<Buffer>;
  group(statements: Uint8Array[]): Promise<Buffer[]>;
  /** Column readers by type OID (PGlite's defaults and its array types). */
  readonly parsers: Record<number, Parser | undefined>;
  /** Parameter writers by type OID. */
  readonly serializers: Record<number, Serializer | undefined>;
}

/** A statement's request, waiting for its turn in a group. */
export type Waiting = {
  text: string;
  params: unknown[];
  options: QueryOptions | undefined;
  resolve: (r: Results<unknown>) => void;
  reject: (err: unknown) => void;
};

/**
 * PGlite's `query()` parses, plans and describes every statement again (unnamed statement, six
 * messages across the WebAssembly boundary). In WebAssembly, parsing and planning are most of a
 * simple statement's cost: a four-table join by primary keys costs about 0.9 ms unprepared and 0.4
 * prepared. The store sends a few dozen distinct statements, over and over.
 *
 * These statements are kept prepared under a name on PGlite's one connection and run as Bind,
 * Execute and Sync in one exchange, with the parameter and row descriptions learned when they
 * were prepared, and their answers are read off the wire here (pglite-wire.ts), with the same
 * results and errors PGlite's own `query()` gives.
 *
 * `run` runs one statement in an exchange of its own; `sendGroup` sends the statements of several
 * requests to run in one exchange and one commit: on a busy server most of a simple write's cost
 * in PGlite is the exchange and the commit around it, not the statement. The caller holds the
 * connection while it calls them (pglite-client.ts), so neither lands inside a transaction.
 */
export function preparedStatements(host: StatementHost) {
  const statements = new Map<string, Prepared>();
  let counter = 0;

  /** Messages that prepare or close a statement, with the answer read by PGlite's own reader. */
  const control = async (message: Uint8Array): Promise<BackendMessage[]> => readChecked(await host.exchange(message, false));

  const close = async (name: string): Promise<void> => {
    await control(concat([protocol.serialize.close({ type: "S", name }), protocol.serialize.sync()]));
  };

  const prepare = async (text: string): Promise<Prepared> => {
    const name = `torii_${++counter}`;
    const answer = await control(
      concat([protocol.serialize.parse({ name, text }), protocol.serialize.describe({ type: "S", name }), protocol.serialize.sync()]),
    );
    const rowDescription = answer.find((m) => m.name === "rowDescription") as (BackendMessage & { fields: { name: string; dataTypeID: number }[] }) | undefined;
    const prepared = {
      name,
      paramTypes: parse.parseDescribeStatementResults(answer),
      fields: rowDescription?.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })) ?? [],
    };
    statements.set(text, prepared);
    if (statements.size > MAX_STATEMENTS) {
      const [oldestText, oldest] = statements.entries().next().value as [string, Prepared];
      statements.delete(oldestText);
      await close(oldest.name);
    }
    return prepared;
  };

  /**
   * The statement already prepared for `text`, now the most recently used (the eviction takes the
   * first). Synchronous, so that the usual case costs no promise: `cached(text) ?? await prepare(text)`.
   */
  const cached = (text: string): Prepared | undefined => {
    const prepared = statements.get(text);
    if (!prepared) return undefined;
    statements.delete(text);
    statements.set(text, prepared);
    return prepared;
  };

  const bindValues = (prepared: Prepared, params: unknown[], options: QueryOptions | undefined): (string | null)[] =>
    params.map((param, i) => {
      if (param === null || param === undefined) return null;
      const serialize = options?.serializers?.[prepared.paramTypes[i]!] ?? host.serializers[prepared.paramTypes[i]!];
      return serialize ? serialize(param) : (param as { toString(): string }).toString();
    });

  /**
   * A statement's result from its output read off the wire (pglite-wire.ts). An error is read by
   * PGlite's own protocol reader, so that it is PGlite's DatabaseError with its SQLSTATE and
   * fields, as PGlite's `query()` would throw it.
   */
  const resultOfWire = <T>(prepared: Prepared, wire: Buffer, options: QueryOptions | undefined): Results<T> => {
    const answers = readAnswers(wire);
    if (!answers) throw databaseError(wire);
    // Never expected otherwise: one Execute, one answer. It may have committed, so it must not
    // run again; its caller learns that the answer was lost.
    if (answers.length !== 1) throw new Error(`PGlite answered one statement with ${answers.length} results`);
    // A query's own parsers come first, for that query only.
    const own = options?.parsers as Record<number, Parser> | undefined;
    const parserFor = (type: number): Parser | undefined => own?.[type] ?? host.parsers[type];
    return resultOfAnswer(answers[0]!, prepared.fields, parserFor, options?.rowMode) as Results<T>;
  };

  /** One statement in an exchange of its own (Bind, Execute, Sync), prepared again once if stale. */
  const run = async <T>(text: string, params: unknown[], options: QueryOptions | undefined, retried = false): Promise<Results<T>> => {
    const prepared = cached(text) ?? (await prepare(text));
    const message = bindAndExecute(prepared.name, bindValues(prepared, params, options), true);
    try {
      return resultOfWire<T>(prepared, await host.exchange(message, true), options);
    } catch (err) {
      if (retried || !isStale(err)) throw err;
      statements.delete(text);
      await close(prepared.name);
      return run<T>(text, params, options, true);
    }
  };

  /**
   * Sends the statements of several requests as one group (`PgliteThread.group`: one exchange and
   * one commit; if one fails, each runs again alone) and resolves once they are sent: each caller
   * is answered when the thread answers. A statement that cannot be prepared or a value that
   * cannot be sent fails its own caller only. A statement whose prepared form went stale (a
   * migration changed its table) is handed to `again`, which runs it alone under the caller's
   * locks, where it is prepared anew.
   */
  const sendGroup = async (group: Waiting[], again: (w: Waiting) => void): Promise<void> => {
    const sent: { w: Waiting; prepared: Prepared }[] = [];
    const parts: Uint8Array[] = [];
    for (const w of group) {
      try {
        const prepared = cached(w.text) ?? (await prepare(w.text));
        parts.push(bindAndExecute(prepared.name, bindValues(prepared, w.params, w.options)));
        sent.push({ w, prepared });
      } catch (err) {
        w.reject(err);
      }
    }
    if (!parts.length) return;
    host.group(parts).then(
      (answers) => {
        sent.forEach(({ w, prepared }, i) => {
          try {
            w.resolve(resultOfWire(prepared, answers[i]!, w.options));
          } catch (err) {
            if (isStale(err)) again(w);
            else w.reject(err);
          }
        });
      },
      // Not an answer from PostgreSQL but a failure around it: whether anything was kept is
      // unknown, so nothing runs again.
      (err: unknown) => {
        for (const { w } of sent) w.reject(err);
      },
    );
  };

  return { run, sendGroup };
}

function isStale(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && STALE_STATEMENT.has(code);
}

/** Every message of an exchange's output, as PGlite's own reader makes them. */
function readMessages(wire: Buffer): BackendMessage[] {
  const all: BackendMessage[] = [];
  new protocol.Parser().parse(wire, (m) => void all.push(m));
  return all;
}

/** The messages of an exchange's output; throws PGlite's DatabaseError if it holds one. */
export function readChecked(wire: Buffer): BackendMessage[] {
  const all = readMessages(wire);
  const error = all.find((m) => m instanceof messages.DatabaseError);
  if (error) throw error;
  return all;
}

/** The error in an exchange's output, as PGlite's own reader makes it. */
function databaseError(wire: Buffer): Error {
  return readMessages(wire).find((m): m is InstanceType<typeof messages.DatabaseError> => m instanceof messages.DatabaseError) ?? new Error("PGlite reported an error it did not describe");
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
