import { Mutex, parse, protocol, TransactionAbortedError, types, type QueryOptions, type Results, type Transaction } from "@electric-sql/pglite";
import { MAX_GROUP, preparedStatements, readChecked, type StatementHost, type Waiting } from "./pglite-statements";
import type { PgliteThread } from "./pglite-thread";
import type { Parser } from "./pglite-wire";
import type { WriteWatch } from "./write-watch";

type Serializer = (value: unknown) => string;

/**
 * The client Drizzle and the migrator talk to when the database is PGlite: PGlite's `query`,
 * `exec`, `transaction` and `close`, with PGlite's answers and errors, over a PGlite that runs on
 * a thread of its own (pglite-thread.ts).
 *
 * It keeps PGlite's rules: one connection, so a transaction holds it from BEGIN to COMMIT and
 * nothing else runs meanwhile, and a statement outside one is a transaction of its own. Statements
 * outside a transaction that are asked for in the same turn of the event loop (concurrent
 * requests) go to the thread as one group: one exchange and one commit (`sendGroup` in
 * pglite-statements.ts, `group` in pglite-thread.ts).
 */
export class PgliteClient implements StatementHost {
  /** PGlite's default readers and writers, and (once open) those of every array type. */
  readonly parsers: Record<number, Parser | undefined> = { ...(types.parsers as Record<number, Parser>) };
  readonly serializers: Record<number, Serializer | undefined> = { ...(types.serializers as Record<number, Serializer>) };
  /** Resolves when the database is open and its types known. */
  readonly waitReady: Promise<void>;

  // As in PGlite: a transaction holds the first lock from BEGIN to its end, and each exchange
  // holds the second; a statement outside a transaction takes both.
  private readonly transactionLock = new Mutex();
  private readonly queryLock = new Mutex();
  private readonly statements = preparedStatements(this);
  private readonly waiting: Waiting[] = [];
  private draining = false;
  /** Shown every statement as it is sent (write-watch.ts). */
  readonly watches: WriteWatch[] = [];

  constructor(private readonly thread: PgliteThread) {
    this.waitReady = thread.ready.then(() => this.readArrayTypes());
    // A database that cannot open is reported to every caller; nobody has to await this.
    this.waitReady.catch(() => {});
  }

  exchange(message: Uint8Array, syncToFs: boolean): Promise<Buffer> {
    return this.thread.exchange(message, syncToFs);
  }

  group(statements: Uint8Array[]): Promise<Buffer[]> {
    return this.thread.group(statements);
  }

  /**
   * A statement with parameters, as PGlite's `query()`. It waits until the loop's current turn is
   * done (setImmediate), so that the statements of the requests served in the same turn share one
   * exchange; an idle server answers one statement alone, with no delay beyond that turn.
   */
  query<T>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> {
    // Torii never sends these: they would need PGlite's own, unprepared path.
    if (options?.blob || options?.paramTypes) return Promise.reject(new Error("blobs and caller-chosen parameter types are not supported"));
    this.sending(text);
    return new Promise<Results<T>>((resolve, reject) => {
      this.waiting.push({ text, params, options, resolve: resolve as Waiting["resolve"], reject });
      if (!this.draining) {
        this.draining = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  /** SQL text of any number of statements without parameters, as PGlite's `exec()`. */
  async exec(text: string, options?: QueryOptions): Promise<Results[]> {
    await this.waitReady;
    return this.transactionLock.runExclusive(() => this.simple(text, options));
  }

  /**
   * `fn` in one transaction, as PGlite's `transaction()`: committed if it returns, rolled back if
   * it throws (and the error thrown on).
   */
  async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    await this.waitReady;
    return this.transactionLock.runExclusive(async () => {
      await this.simple("BEGIN");
      // An object, not a variable: rollback() closes it from inside `fn`.
      const state = { closed: false };
      const open = () => {
        if (state.closed) throw new Error("Transaction is closed");
      };
      const tx: Transaction = {
        query: async <R,>(text: string, params: unknown[] = [], options?: QueryOptions) => {
          open();
          this.sending(text);
          return this.queryLock.runExclusive(() => this.statements.run<R>(text, params, options));
        },
        exec: async (text: string, options?: QueryOptions) => {
          open();
          return this.simple(text, options);
        },
        sql: () => Promise.reject(new Error("tagged SQL is not supported")),
        listen: () => Promise.reject(new Error("LISTEN is not supported")),
        rollback: async () => {
          open();
          await this.simple("ROLLBACK");
          state.closed = true;
        },
        get closed() {
          return state.closed;
        },
      };
      try {
        const result = await fn(tx);
        if (!state.closed) {
          state.closed = true;
          const [answer] = await this.simple("COMMIT");
          // COMMIT of a transaction that failed inside rolls it back instead.
          if (answer?.command === "ROLLBACK") throw new TransactionAbortedError();
        }
        return result;
      } catch (err) {
        if (!state.closed) {
          state.closed = true;
          await this.simple("ROLLBACK");
        }
        throw err;
      }
    });
  }

  /** Waits for the statements already asked for, then closes the database and its thread. */
  async close(): Promise<void> {
    await this.transactionLock.runExclusive(() => this.queryLock.runExclusive(() => this.thread.close()));
  }

  /** A simple-protocol exchange; the caller holds the transaction lock (or is inside one). */
  private simple(text: string, options?: QueryOptions): Promise<Results[]> {
    this.sending(text);
    return this.queryLock.runExclusive(async () => {
      // PGlite's serializer hands out a buffer of its own each time: it can be moved to the thread.
      const answer = readChecked(await this.thread.exchange(protocol.serialize.query(text), true));
      return parse.parseResults(answer, this.parsers as never, options);
    });
  }

  /**
   * Sends what is waiting as groups. Only the sending holds the locks (so that a group never lands
   * inside a transaction, and one begun after it is sent runs after it): the answers come later,
   * and meanwhile the next turn's statements go as a group of their own, which the thread merges
   * into its next exchange if it is still busy. So the thread never waits for this one.
   */
  private async drain(): Promise<void> {
    try {
      await this.waitReady;
      while (this.waiting.length) {
        const group = this.waiting.splice(0, MAX_GROUP);
        // sendGroup answers or fails each of its statements itself; it never throws.
        await this.transactionLock.runExclusive(() => this.queryLock.runExclusive(() => this.statements.sendGroup(group, (w) => void this.again(w))));
      }
    } catch (err) {
      // The database could not open: nothing waiting can run.
      for (const w of this.waiting.splice(0)) w.reject(err);
    } finally {
      this.draining = false;
    }
  }

  /** A statement of a group whose prepared form went stale, run alone (and prepared anew). */
  private async again(w: Waiting): Promise<void> {
    // Sent again after statements that came later: a read among them must not pass for newer.
    this.sending(w.text);
    try {
      w.resolve(await this.transactionLock.runExclusive(() => this.queryLock.runExclusive(() => this.statements.run(w.text, w.params, w.options))));
    } catch (err) {
      w.reject(err);
    }
  }

  private sending(text: string): void {
    for (const w of this.watches) w.sent(text);
  }

  /** Readers and writers for the array of every type, as PGlite learns them when it opens. */
  private async readArrayTypes(): Promise<void> {
    const [result] = await this.simple(
      `SELECT b.oid, b.typarray FROM pg_catalog.pg_type a LEFT JOIN pg_catalog.pg_type b ON b.oid = a.typelem
       WHERE a.typcategory = 'A' GROUP BY b.oid, b.typarray ORDER BY b.oid`,
    );
    for (const { oid, typarray } of (result?.rows ?? []) as { oid: number; typarray: number }[]) {
      this.serializers[typarray] = (value) => types.arraySerializer(value, this.serializers[oid], typarray);
      this.parsers[typarray] = (value) => types.arrayParser(value, this.parsers[oid] as never, typarray);
    }
  }
}
