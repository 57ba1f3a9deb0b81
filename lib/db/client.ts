import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgresJs } from "drizzle-orm/postgres-js";
import pg from "pg";
import postgres from "postgres";
import * as schema from "@/db/schema";
import { PgliteClient } from "./pglite-client";
import { startPgliteThread } from "./pglite-thread";
import { RoundTripCounter, roundTripCountingEnabled } from "./round-trips";
import { WRITE_NOTICE_CHANNEL, NoticedWriteWatch } from "./write-notices";
import { WriteWatch } from "./write-watch";

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;
/** A transaction or the database: store functions accept either. */
export type Executor = Pick<Db, "select" | "insert" | "update" | "delete" | "execute" | "transaction">;
/** An open transaction. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

/** Raw SQL on one connection, for the migrator (which needs a single session for its lock). */
export interface RawSession {
  exec(sql: string): Promise<void>;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  release(): Promise<void>;
}

export interface Database {
  kind: "pglite" | "pg";
  db: Db;
  session(): Promise<RawSession>;
  /**
   * LISTEN on a channel on a connection of its own (PostgreSQL only), reconnecting after a loss
   * (`onLost` is told, since notifications may have been missed). Returns the function that stops.
   */
  listen?(channel: string, onMessage: (payload: string) => void, onLost: (err: Error) => void): Promise<() => Promise<void>>;
  /**
   * Sends one statement to the driver as it is, with driver values for its `$n` parameters, and
   * returns its rows: for statements built once and kept as text (lib/store/statement.ts), which
   * Drizzle would only take apart and put together again.
   */
  query(text: string, params: unknown[]): Promise<unknown[]>;
  /**
   * A watch that tells whether a write to a table other than the `unaffected` ones may have
   * happened since: on PGlite, where this process is the only writer, from the statements it
   * sends (write-watch.ts); on PostgreSQL also from the notices the database sends on commit of
   * every write to the tables that have a write-notice trigger, from any connection, and only
   * while those arrive (write-notices.ts).
   */
  watchWrites?(unaffected: readonly string[]): WriteWatch;
  close(): Promise<void>;
  /** Present only with IDP_DEBUG_DB_ROUND_TRIPS=1 (the benchmark's round-trip count). */
  roundTrips?: RoundTripCounter;
}

export function openDatabase(opts: { databaseUrl?: string; dataDir: string; inMemory?: boolean; inMemoryImage?: string }): Database {
  const counter = roundTripCountingEnabled() ? new RoundTripCounter() : undefined;
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, counter);
  return openPglite(opts.inMemory ? undefined : path.join(opts.dataDir, "pgdata"), counter, opts.inMemoryImage);
}

/** Drizzle's logger sees every statement it sends (on PostgreSQL also BEGIN and COMMIT). */
const countingLogger = (counter: RoundTripCounter) => ({ logQuery: () => { counter.count(); } });

/**
 * How many connections to PostgreSQL: IDP_DB_POOL_SIZE, or one per core of this machine and at
 * least 2. postgres.js sends a statement on an idle connection if there is one, and otherwise
 * queues it behind those already sent on a busy one (pipelining): it goes out at once, without
 * waiting for the answers before it. So a few connections serve many concurrent requests, and
 * the fewer there are, the more statements share each write to the socket and each wake-up of a
 * server process. On two cores, 2 connections instead of node-postgres's 10 gave refresh 27 to
 * 33 % more ops/s and the code flow 21 to 24 % (4 connections: 14 to 31 % and 15 to 17 %), and
 * PostgreSQL a third less CPU per code flow; node-postgres, which cannot pipeline, gained nothing
 * from a smaller pool. More connections than cores only make the server's processes compete for
 * them. The cost: a statement queued behind a slow one waits for it, and a transaction holds a
 * connection of its own until it ends; the provider's statements are point reads and small writes
 * by key, and the slow ones (an administrator's audit search) are rare. A database on a bigger
 * machine than this one may want IDP_DB_POOL_SIZE higher.
 */
export function postgresPoolSize(env: Record<string, string | undefined> = process.env, cores = os.availableParallelism()): number {
  const set = Number(env.IDP_DB_POOL_SIZE);
  return Number.isInteger(set) && set > 0 ? set : Math.max(2, cores);
}

/**
 * How long postgres.js waits before its next attempt to open a connection after failed ones, in
 * seconds. Its default grows to 10 to 20 s after about seven failures, and the failures of every
 * connection count together: a few seconds into an outage each request that needs the database
 * waited that long before being answered 503 (lib/db/unavailable.ts), and the pool took as long to
 * notice the database was back. Capped at one second, with jitter so that instances do not retry
 * in step; an attempt costs PostgreSQL little.
 */
export function reconnectDelaySeconds(retries: number, random = Math.random()): number {
  return (0.5 + random / 2) * Math.min(0.05 * 2 ** retries, 1);
}

/**
 * How long opening a connection may take, in seconds (postgres.js's default is 30). A host that
 * drops packets rather than refusing would otherwise hold each request that much; PostgreSQL
 * answers in milliseconds, a remote one with TLS in well under a second.
 */
const CONNECT_TIMEOUT_SECONDS = 10;

function openPostgres(url: string, counter?: RoundTripCounter): Database {
  const client = postgres(url, {
    max: postgresPoolSize(),
    onnotice: () => {},
    backoff: (retries: number) => reconnectDelaySeconds(retries),
    connect_timeout: CONNECT_TIMEOUT_SECONDS,
  });
  const preparedTexts = new PreparedTexts();
  // Every statement this process sends, through Drizzle or as text, is shown to the write watches.
  const watches: NoticedWriteWatch[] = [];
  const stopWatching: Promise<() => Promise<void>>[] = [];
  const sending = (text: string) => {
    for (const w of watches) w.sent(text);
  };
  const logger = { logQuery: (text: string) => { counter?.count(); sending(text); } };
  const db = drizzlePostgresJs(client, { schema, logger }) as unknown as Db;
  if (counter) {
    // postgres.js sends BEGIN and COMMIT (or ROLLBACK) itself, so Drizzle's logger never sees them.
    const transaction = db.transaction.bind(db);
    db.transaction = (fn, config) => {
      counter.count(2);
      return transaction(fn, config);
    };
  }
  return {
    kind: "pg",
    db,
    roundTrips: counter,
    async session() {
      const reserved = await client.reserve();
      return {
        exec: async (text) => {
          sending(text);
          await reserved.unsafe(text);
        },
        query: async <T,>(text: string, params?: unknown[]) => {
          sending(text);
          return (await reserved.unsafe(text, (params ?? []) as never[])) as unknown as T[];
        },
        release: () => {
          reserved.release();
          return Promise.resolve();
        },
      };
    },
    listen: (channel, onMessage, onLost) => listenOnOwnConnection(url, channel, onMessage, onLost),
    query: async (text, params) => {
      counter?.count();
      sending(text);
      // Prepared on each connection the first time (postgres.js names and keeps it). Its rows
      // are an array already (RowList extends Array): no copy on the write path.
      return await client.unsafe(text, params as never[], { prepare: preparedTexts.admit(text) });
    },
    watchWrites(unaffected) {
      const watch = new NoticedWriteWatch(unaffected);
      watches.push(watch);
      stopWatching.push(
        keepListening(url, WRITE_NOTICE_CHANNEL, {
          onMessage: (table) => { watch.noticed(table); },
          onListening: () => { watch.setListening(true); },
          onLost: () => { watch.setListening(false); },
        }),
      );
      return watch;
    },
    close: async () => {
      for (const stop of await Promise.all(stopWatching)) await stop();
      await client.end({ timeout: 5 });
    },
  };
}

function listenOnOwnConnection(
  url: string,
  channel: string,
  onMessage: (payload: string) => void,
  onLost: (err: Error) => void,
): Promise<() => Promise<void>> {
  return listening(url, channel, { onMessage, onLost }, true);
}

/**
 * LISTEN as `listenOnOwnConnection` does, but a first connection that fails is retried like a
 * lost one instead of failing the caller; `onListening` is told each time LISTEN is in place.
 */
function keepListening(
  url: string,
  channel: string,
  handlers: { onMessage: (payload: string) => void; onLost: (err: Error) => void; onListening: () => void },
): Promise<() => Promise<void>> {
  return listening(url, channel, handlers, false);
}

async function listening(
  url: string,
  channel: string,
  { onMessage, onLost, onListening }: { onMessage: (payload: string) => void; onLost: (err: Error) => void; onListening?: () => void },
  firstMustConnect: boolean,
): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const lost = (err: unknown) => { onLost(err instanceof Error ? err : new Error(String(err))); };
  const reconnectLater = () => {
    if (stopped) return;
    retry = setTimeout(() => {
      connect().catch((err: unknown) => {
        lost(err);
        reconnectLater();
      });
    }, 1000);
    retry.unref();
  };
  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    c.on("notification", (n) => {
      if (n.channel === channel && n.payload) onMessage(n.payload);
    });
    c.on("error", (err) => {
      if (stopped) return;
      onLost(err);
      void c.end().catch(() => {});
      reconnectLater();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${channel}`);
    } catch (err) {
      void c.end().catch(() => {});
      throw err;
    }
    if (stopped) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    onListening?.();
  };
  if (firstMustConnect) await connect();
  else
    await connect().catch((err: unknown) => {
      lost(err);
      reconnectLater();
    });
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    await client?.end().catch(() => {});
  };
}

/**
 * The embedded server's postgresql.conf, written by PGlite on every start (it replaces the file).
 * The first lines are what PGlite's initdb writes, kept so that replacing the file changes nothing
 * else (time zone UTC, C locale). The memory lines differ from PGlite's defaults, which size it
 * for a database server of its own (128 MB of shared buffers, 64 MB of maintenance memory), all
 * of it resident in this process's WebAssembly heap. An identity provider's working set is small,
 * so these keep the process near 300 MB instead of 500+ (README, "Benchmark", memory).
 */
export const PGLITE_CONF = [
  "max_connections = 100",
  "dynamic_shared_memory_type = posix",
  "max_wal_size = 1GB",
  "min_wal_size = 80MB",
  "log_timezone = UTC",
  "datestyle = 'iso, mdy'",
  "timezone = UTC",
  "lc_messages = C",
  "lc_monetary = C",
  "lc_numeric = C",
  "lc_time = C",
  "default_text_search_config = 'pg_catalog.english'",
  "shared_buffers = 32MB",
  "wal_buffers = 1MB",
  "maintenance_work_mem = 16MB",
  "temp_buffers = 4MB",
  "work_mem = 4MB",
];

/**
 * Creates a new data folder in a child process. PGlite runs initdb as a second WebAssembly
 * module; in this process its heap (about 100 MB) would stay resident for the process's life,
 * since WebAssembly memory never shrinks. Only the first start of an instance pays for the child.
 */
function createPgliteDataDir(dir: string): void {
  if (fs.existsSync(path.join(dir, "PG_VERSION"))) return;
  fs.mkdirSync(dir, { recursive: true });
  const pglite = pathToFileURL(createRequire(import.meta.url).resolve("@electric-sql/pglite")).href;
  const script = `const { PGlite } = await import(${JSON.stringify(pglite)}); const db = await PGlite.create(process.argv[1]); await db.close();`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script, dir], { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  if (r.status !== 0) throw new Error(`could not create the embedded database in ${dir}: ${(r.stderr || r.error?.message || "").trim().split("\n").at(-1) ?? ""}`);
}

function openPglite(dir: string | undefined, counter?: RoundTripCounter, image?: string): Database {
  if (dir) createPgliteDataDir(dir);
  const client = new PgliteClient(startPgliteThread(dir, PGLITE_CONF, image));
  if (counter) {
    // BEGIN and COMMIT/ROLLBACK are sent by the client itself, outside drizzle's logger: two more per transaction.
    const transaction = client.transaction.bind(client);
    client.transaction = ((fn: Parameters<typeof transaction>[0]) => (counter.count(2), transaction(fn))) as typeof client.transaction;
  }
  const db = drizzlePglite(client as never, { schema, ...(counter && { logger: countingLogger(counter) }) }) as unknown as Db;
  return {
    kind: "pglite",
    db,
    roundTrips: counter,
    session() {
      // PGlite is a single connection; the migrator's statements simply run on it.
      return Promise.resolve({
        exec: async (sql: string) => {
          await client.exec(sql);
        },
        query: async <T,>(sql: string, params?: unknown[]) => (await client.query<T>(sql, params)).rows,
        release: () => Promise.resolve(),
      });
    },
    query: async (text, params) => {
      counter?.count();
      return (await client.query(text, params)).rows;
    },
    watchWrites(unaffected) {
      const watch = new WriteWatch(unaffected);
      client.watches.push(watch);
      return watch;
    },
    close: () => client.close(),
  };
}

/** `db.execute`'s rows: `{rows}` from PGlite's driver, the rows themselves (an array) from postgres.js. */
export function resultRows<T>(result: unknown): T[] {
  return Array.isArray(result) ? (result as T[]) : (result as { rows: T[] }).rows;
}

/** A transaction-scoped advisory lock: instances on one database serialise on `key` until the transaction ends. */
export async function advisoryXactLock(tx: Executor, key: number): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(${key})`);
}

/** NOTIFY `channel`: PostgreSQL delivers it to the listeners when the transaction commits, never if it rolls back. */
export async function notifyOnCommit(tx: Executor, channel: string, payload: string): Promise<void> {
  await tx.execute(sql`SELECT pg_notify(${channel}, ${payload})`);
}

/**
 * Which texts sent through `Database.query` (the store's batched writes: a few shapes, each sent
 * over and over) postgres.js prepares, so that each connection parses and plans each one once and
 * then only binds and executes it, as the prepared reads do (lib/store/statement.ts). postgres.js
 * keeps a connection's prepared statements for the connection's life; past `max` texts, more are
 * sent unprepared, so that a bug that made texts without end cannot make prepared statements
 * without end on every connection.
 */
export class PreparedTexts {
  private readonly texts = new Set<string>();

  constructor(private readonly max = 200) {}

  admit(text: string): boolean {
    if (this.texts.has(text)) return true;
    if (this.texts.size >= this.max) return false;
    this.texts.add(text);
    return true;
  }
}
