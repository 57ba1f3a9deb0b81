import { messages, parse, protocol, type PGlite, type QueryOptions, type Results } from "@electric-sql/pglite";
import { readAnswers, resultOfAnswer, type Answer, type Parser } from "./pglite-wire";

type BackendMessage = { name: string };

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

type Waiting = {
  text: string;
  params: unknown[];
  options: QueryOptions | undefined;
  resolve: (r: Results<unknown>) => void;
  reject: (err: unknown) => void;
};

/** At most this many statements share one exchange. */
const MAX_GROUP = 64;

/**
 * PGlite's `query()` parses, plans and describes every statement again (unnamed statement, six
 * messages across the WebAssembly boundary). In WebAssembly, parsing and planning are most of a
 * simple statement's cost: a four-table join by primary keys costs about 0.9 ms unprepared and 0.4
 * prepared. The store sends a few dozen distinct statements, over and over.
 *
 * This gives Drizzle a client whose `query()` keeps each statement text prepared under a name on
 * PGlite's one connection, and runs it as Bind, Execute and Sync in one exchange, with the
 * parameter and row descriptions learned when it was prepared, and reads the answer off the wire
 * itself (pglite-wire.ts). Everything else (transactions, `exec`, listening) is PGlite's own,
 * untouched: statements inside a transaction run as PGlite runs them, since they are rare on the
 * request path (lib/store/write.ts).
 *
 * Statements asked for in the same turn of the event loop (concurrent requests) share one
 * exchange and one commit (`runGroup`): on a busy server most of a simple write's cost in PGlite is
 * the exchange and the commit around it, not the statement.
 *
 * Like PGlite's own `query()`, it holds PGlite's transaction and query locks while it runs, so it
 * never interleaves with a transaction, and it syncs the file system after each exchange.
 */
export function withPreparedStatements(pg: PGlite): PGlite {
  const statements = new Map<string, Prepared>();
  let counter = 0;

  const close = async (name: string): Promise<void> => {
    await pg.execProtocol(concat([protocol.serialize.close({ type: "S", name }), protocol.serialize.sync()]), { syncToFs: false });
  };

  const prepare = async (text: string): Promise<Prepared> => {
    const name = `torii_${++counter}`;
    const { messages } = await pg.execProtocol(
      concat([protocol.serialize.parse({ name, text }), protocol.serialize.describe({ type: "S", name }), protocol.serialize.sync()]),
      { syncToFs: false },
    );
    const rowDescription = messages.find((m) => m.name === "rowDescription") as (BackendMessage & { fields: { name: string; dataTypeID: number }[] }) | undefined;
    const prepared = {
      name,
      paramTypes: parse.parseDescribeStatementResults(messages),
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

  /** The statement prepared for `text`, most recently used last (the eviction takes the first). */
  const preparedFor = async (text: string): Promise<Prepared> => {
    const prepared = statements.get(text);
    if (!prepared) return prepare(text);
    statements.delete(text);
    statements.set(text, prepared);
    return prepared;
  };

  const bindValues = (prepared: Prepared, params: unknown[], options: QueryOptions | undefined): (string | null)[] =>
    params.map((param, i) => {
      if (param === null || param === undefined) return null;
      const serialize = options?.serializers?.[prepared.paramTypes[i]!] ?? pg.serializers[prepared.paramTypes[i]!];
      return serialize ? serialize(param) : (param as { toString(): string }).toString();
    });

  const bindAndExecute = (prepared: Prepared, values: (string | null)[]): Uint8Array[] => [
    protocol.serialize.bind({ statement: prepared.name, values }),
    protocol.serialize.execute({}),
  ];

  /** A statement's result from its answer read off the wire (pglite-wire.ts). */
  const resultOfWire = <T>(prepared: Prepared, answer: Answer, options: QueryOptions | undefined): Results<T> => {
    // PGlite's parsers hold its default ones too; a query's own come first, for that query only.
    const own = options?.parsers as Record<number, Parser> | undefined;
    const all = pg.parsers as Record<number, Parser | undefined>;
    const parserFor = (type: number): Parser | undefined => own?.[type] ?? all[type];
    return resultOfAnswer(answer, prepared.fields, parserFor, options?.rowMode) as Results<T>;
  };

  /** PGlite's output for `message`, as bytes: read by readAnswers, not by PGlite's own reader. */
  const exchange = async (message: Uint8Array): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    // The bytes are a view of PGlite's memory, reused after the callback: copied.
    await pg.execProtocolRawStream(message, { onRawData: (bytes) => void chunks.push(Buffer.from(bytes)) });
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  };

  /**
   * One statement in an exchange of its own (Bind, Execute, Sync), prepared again once if stale.
   * Its answer is read off the wire; an error is read by PGlite's own protocol reader, so that it
   * is PGlite's DatabaseError with its SQLSTATE and fields, as PGlite's `query()` would throw it.
   */
  const run = async <T>(text: string, params: unknown[], options: QueryOptions | undefined, retried = false): Promise<Results<T>> => {
    const prepared = await preparedFor(text);
    const message = concat([...bindAndExecute(prepared, bindValues(prepared, params, options)), protocol.serialize.sync()]);
    try {
      const wire = await exchange(message);
      const answers = readAnswers(wire);
      if (!answers) throw databaseError(wire);
      // Never expected otherwise: one Execute, one answer. It may have committed, so it must not run again.
      if (answers.length !== 1) throw new Error(`PGlite answered one statement with ${answers.length} results`);
      return resultOfWire<T>(prepared, answers[0]!, options);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (retried || !code || !STALE_STATEMENT.has(code)) throw err;
      statements.delete(text);
      await close(prepared.name);
      return run<T>(text, params, options, true);
    }
  };

  /**
   * The statements of several requests in one exchange: Bind and Execute for each, then one Sync.
   * Without a Sync between them they form one implicit transaction, so they commit together (one
   * commit and one file-system sync instead of one each) in the order they were asked for, each
   * seeing the ones before it as it would have running after them. If any of them fails, none is
   * kept (the implicit transaction rolls back) and each runs again in an exchange of its own, in
   * the same order: each then gets its own answer or error, as if they had never been grouped.
   */
  const runGroup = async (group: Waiting[]): Promise<void> => {
    const alone = async () => {
      for (const w of group) await settle(w, () => run(w.text, w.params, w.options));
    };
    // One statement runs alone: run() reads its error without running it a second time.
    if (group.length === 1) return alone();
    const prepared: Prepared[] = [];
    let message: Uint8Array;
    try {
      for (const w of group) prepared.push(await preparedFor(w.text));
      const parts = group.flatMap((w, i) => bindAndExecute(prepared[i]!, bindValues(prepared[i]!, w.params, w.options)));
      message = concat([...parts, protocol.serialize.sync()]);
    } catch {
      // A statement that cannot be prepared or a value that cannot be sent: nothing ran yet, and
      // each caller gets its own answer or error.
      return alone();
    }
    let answers: Answer[] | undefined;
    try {
      answers = readAnswers(await exchange(message));
    } catch (err) {
      // Not an answer from PostgreSQL but a failure around it: whether anything was kept is
      // unknown, so nothing runs again.
      for (const w of group) w.reject(err);
      return;
    }
    // One of them failed, so none was kept.
    if (!answers) return alone();
    // Committed: one answer per statement, in order.
    group.forEach((w, i) => {
      const answer = answers[i];
      // Never expected: PostgreSQL answers every Execute that ran. Those left have committed, so
      // they must not run again; their callers learn that their answer was lost.
      if (!answer) w.reject(new Error("PGlite answered fewer statements than it was sent"));
      else void settle(w, () => Promise.resolve(resultOfWire(prepared[i]!, answer, w.options)));
    });
  };

  const settle = async (w: Waiting, fn: () => Promise<Results<unknown>>): Promise<void> => {
    try {
      w.resolve(await fn());
    } catch (err) {
      w.reject(err);
    }
  };

  /**
   * Statements waiting for the next exchange. A statement asked for while the event loop is busy
   * waits until the loop's current turn is done (setImmediate), so that the requests served in the
   * same turn share one exchange; an idle server answers one statement alone, with no delay
   * beyond that turn.
   */
  const waiting: Waiting[] = [];
  let draining = false;

  const drain = async (): Promise<void> => {
    let group: Waiting[] = [];
    try {
      await pg._checkReady();
      while (waiting.length) {
        group = waiting.splice(0, MAX_GROUP);
        await pg._runExclusiveTransaction(() => pg._runExclusiveQuery(() => runGroup(group)));
      }
    } catch (err) {
      // PGlite closed or failed to start: nothing waiting can run (rejecting a settled one is a no-op).
      for (const w of [...group, ...waiting.splice(0)]) w.reject(err);
    } finally {
      draining = false;
    }
  };

  const query = <T>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> => {
    // Blobs (COPY) and caller-chosen parameter types stay with PGlite's own path.
    if (options?.blob || options?.paramTypes) return pg.query<T>(text, params, options);
    return new Promise<Results<T>>((resolve, reject) => {
      waiting.push({ text, params, options, resolve: resolve as Waiting["resolve"], reject });
      if (!draining) {
        draining = true;
        setImmediate(() => void drain());
      }
    });
  };

  // A proxy rather than a patched instance: PGlite's methods use private fields, so they must run
  // with the PGlite itself as `this`, and its own internal `query()` calls stay as they were.
  return new Proxy(pg, {
    get(target, prop) {
      if (prop === "query") return query;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The error in an exchange's output, as PGlite's own reader makes it. */
function databaseError(wire: Buffer): Error {
  let error: Error | undefined;
  new protocol.Parser().parse(wire, (message) => {
    if (!error && message instanceof messages.DatabaseError) error = message;
  });
  return error ?? new Error("PGlite reported an error it did not describe");
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
