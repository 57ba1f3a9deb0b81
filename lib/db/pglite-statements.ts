import { parse, protocol, type PGlite, type QueryOptions, type Results } from "@electric-sql/pglite";

type BackendMessage = { name: string };

/** How many statements stay prepared; the least recently used one is closed past this. */
const MAX_STATEMENTS = 256;

// SQLSTATEs that mean a prepared statement no longer fits the schema or is gone (after a
// migration, say): prepared again once, the statement runs as it would have unprepared.
const STALE_STATEMENT = new Set(["0A000", "26000"]);

type Prepared = { name: string; paramTypes: number[]; rowDescription: BackendMessage | undefined };

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
 * Like PGlite's own `query()`, it holds PGlite's transaction and query locks while it runs, so it
 * never interleaves with a transaction, and it syncs the file system after the statement.
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

  const run = async <T>(text: string, params: unknown[], options: QueryOptions | undefined, retried = false): Promise<Results<T>> => {
    let prepared = statements.get(text);
    if (prepared) {
      // Most recently used last: Map keeps insertion order, the eviction above takes the first.
      statements.delete(text);
      statements.set(text, prepared);
    } else {
      prepared = await prepare(text);
    }
    const values = params.map((param, i) => {
      if (param === null || param === undefined) return null;
      const serialize = options?.serializers?.[prepared.paramTypes[i]!] ?? pg.serializers[prepared.paramTypes[i]!];
      return serialize ? serialize(param) : (param as { toString(): string }).toString();
    });
    try {
      const { messages } = await pg.execProtocol(
        concat([protocol.serialize.bind({ statement: prepared.name, values }), protocol.serialize.execute({}), protocol.serialize.sync()]),
      );
      const all = prepared.rowDescription ? [prepared.rowDescription, ...messages] : messages;
      // PGlite merges a query's own parsers into a copy of all its parsers (a few hundred, with
      // the array types) on every query; one object over them as prototype does the same lookups.
      const parsers = options?.parsers ? Object.assign(Object.create(pg.parsers) as typeof pg.parsers, options.parsers) : pg.parsers;
      return parse.parseResults(all as Parameters<typeof parse.parseResults>[0], parsers, options && { ...options, parsers: undefined })[0] as Results<T>;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (retried || !code || !STALE_STATEMENT.has(code)) throw err;
      statements.delete(text);
      await close(prepared.name);
      return run<T>(text, params, options, true);
    }
  };

  const query = async <T>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> => {
    // Blobs (COPY) and caller-chosen parameter types stay with PGlite's own path.
    if (options?.blob || options?.paramTypes) return pg.query<T>(text, params, options);
    await pg._checkReady();
    return pg._runExclusiveTransaction(() => pg._runExclusiveQuery(() => run<T>(text, params, options)));
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
