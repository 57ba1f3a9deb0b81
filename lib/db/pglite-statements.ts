import { parse, protocol, type PGlite, type QueryOptions, type Results } from "@electric-sql/pglite";

type BackendMessage = { name: string };

/** How many statements stay prepared; the least recently used one is closed past this. */
const MAX_STATEMENTS = 256;

// SQLSTATEs that mean a prepared statement no longer fits the schema or is gone (after a
// migration, say): prepared again once, the statement runs as it would have unprepared.
const STALE_STATEMENT = new Set(["0A000", "26000"]);

type Prepared = { name: string; paramTypes: number[]; rowDescription: BackendMessage | undefined };

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
 * parameter and row descriptions learned when it was prepared. Everything else (transactions,
 * `exec`, listening) is PGlite's own, untouched: statements inside a transaction run as PGlite
 * runs them, since they are rare on the request path (lib/store/write.ts).
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
    const prepared = {
      name,
      paramTypes: parse.parseDescribeStatementResults(messages),
      rowDescription: messages.find((m) => m.name === "rowDescription"),
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

  /** One statement's result from its messages (up to and with its CommandComplete). */
  const resultOf = <T>(prepared: Prepared, messages: BackendMessage[], options: QueryOptions | undefined): Results<T> => {
    const all = prepared.rowDescription ? [prepared.rowDescription, ...messages] : messages;
    // PGlite merges a query's own parsers into a copy of all its parsers (a few hundred, with
    // the array types) on every query; one object over them as prototype does the same lookups.
    const parsers = options?.parsers ? Object.assign(Object.create(pg.parsers) as typeof pg.parsers, options.parsers) : pg.parsers;
    return parse.parseResults(all as Parameters<typeof parse.parseResults>[0], parsers, options && { ...options, parsers: undefined })[0] as Results<T>;
  };

  /** One statement in an exchange of its own (Bind, Execute, Sync), prepared again once if stale. */
  const run = async <T>(text: string, params: unknown[], options: QueryOptions | undefined, retried = false): Promise<Results<T>> => {
    const prepared = await preparedFor(text);
    try {
      const { messages } = await pg.execProtocol(concat([...bindAndExecute(prepared, bindValues(prepared, params, options)), protocol.serialize.sync()]));
      return resultOf<T>(prepared, messages, options);
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
    let messages: BackendMessage[];
    let prepared: Prepared[];
    try {
      prepared = [];
      for (const w of group) prepared.push(await preparedFor(w.text));
      const parts = group.flatMap((w, i) => bindAndExecute(prepared[i]!, bindValues(prepared[i]!, w.params, w.options)));
      ({ messages } = await pg.execProtocol(concat([...parts, protocol.serialize.sync()])));
    } catch {
      for (const w of group) await settle(w, () => run(w.text, w.params, w.options));
      return;
    }
    // Committed: each statement's messages end with its CommandComplete (EmptyQuery for an empty text).
    let from = 0;
    let at = 0;
    for (let i = 0; i < messages.length && at < group.length; i++) {
      const name = messages[i]!.name;
      if (name !== "commandComplete" && name !== "emptyQuery") continue;
      const slice = messages.slice(from, i + 1);
      const w = group[at]!;
      const p = prepared[at]!;
      await settle(w, () => Promise.resolve(resultOf(p, slice, w.options)));
      from = i + 1;
      at++;
    }
    // Never expected: PostgreSQL answers every Execute that ran. Those left have committed, so
    // they must not run again; their callers learn that their answer was lost.
    for (const w of group.slice(at)) w.reject(new Error("PGlite answered fewer statements than it was sent"));
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
        await pg._runExclusiveTransaction(() =>
          pg._runExclusiveQuery(() => (group.length === 1 ? settle(group[0]!, () => run(group[0]!.text, group[0]!.params, group[0]!.options)) : runGroup(group))),
        );
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

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
