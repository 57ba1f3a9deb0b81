import { randomUUID } from "node:crypto";
import { bootstrap, type BootstrapResult } from "@/lib/bootstrap";
import { Caches } from "@/lib/store/caches";
import { Memo } from "@/lib/cache/memo";
import { listenForInvalidations } from "@/lib/store/invalidation";
import type { Config } from "@/lib/config";
import { openDatabase, type Database, type Db } from "@/lib/db/client";
import { migrate } from "@/lib/db/migrate";
import { activeSigningKey, publicJwks, publicKeySet, removeExpiredKeys, rotateSigningKey } from "@/lib/keys/signing-keys";
import { createLogger, type Logger } from "@/lib/log";
import { purgeExpiredRows } from "@/lib/store/sweep";
import { vacuumMostDue } from "@/lib/db/pglite-vacuum";
import { resolveMasterKey } from "@/lib/master-key";
import { TokenThrottle } from "@/lib/http/token-throttle";
import { drizzleStore } from "@/lib/store/drizzle-store";
import { activeSigningKeys } from "@/lib/store/signing-keys";
import { tokenSealer } from "@/lib/keys/token-sealer";
import type { Store } from "@/lib/store/repositories";
import { BackgroundTasks } from "@/lib/background";
import { Mailer } from "@/lib/mail/mailer";
import { dateOf, systemClock, type Clock } from "@/lib/clock";

/**
 * One Torii: everything a request may touch, created once per process by `createTorii` and
 * passed to every handler as an argument. Nothing in the core keeps state of its own outside it
 * (docs/architecture.md, "The engine").
 */
export type Engine = {
  /** Random per engine: tells instances apart in cache invalidations (and tests apart engines). */
  readonly id: string;
  readonly config: Config;
  readonly issuer: string;
  readonly database: Database;
  /** The database; only lib/store and lib/keys build queries on it. */
  readonly db: Db;
  /** The repositories the protocol core works with (lib/store/repositories.ts). */
  readonly store: Store;
  readonly masterKey: Buffer;
  /** The one source of the time for the core (lib/clock.ts): tests hand in a fake one. */
  readonly clock: Clock;
  readonly log: Logger;
  readonly caches: Caches;
  /** What the engine computes once from its configuration (lib/cache/memo.ts). */
  readonly memo: Memo;
  /** The token endpoint's per-instance rate-limit windows and audit sampling (lib/http/token-throttle.ts). */
  readonly tokenThrottle: TokenThrottle;
  /** The key set's rate limit per client address, counted like the token endpoint's. */
  readonly jwksThrottle: TokenThrottle;
  readonly bootstrap: BootstrapResult;
  /** The outbox and its delivery (lib/mail/mailer.ts). */
  readonly mail: Mailer;
  /** Work requests start and do not wait for (lib/background.ts); close() waits for it. */
  readonly background: BackgroundTasks;
  /** Stops the timers and the invalidation listener and closes the database. */
  close(): Promise<void>;
};

export type EngineOptions = {
  /** Periodic key rotation and cleanup (default on; tests that drive time themselves turn it off). */
  timers?: boolean;
  /** The clock the core reads the time from (default: the system's). */
  clock?: Clock;
};

/**
 * Opens the database, migrates it, bootstraps a fresh instance (admin, first key), and starts the
 * timers. Throws `MasterKeyMismatchError` (lib/bootstrap.ts) or a database error; the caller
 * decides how to report it.
 */
export async function createTorii(config: Config, opts: EngineOptions = {}): Promise<Engine> {
  const log = createLogger(config.logLevel);
  const masterKey = resolveMasterKey(config.masterKey, config.dataDir);
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, inMemory: config.inMemory, inMemoryImage: config.inMemoryImage });
  try {
    const { applied } = await migrate(database);
    if (applied) log.info({ applied }, "database migrated");
    const boot = await bootstrap(database.db, { issuer: config.issuer, masterKey, adminPat: config.adminPat, dataDir: config.dataDir });
    const id = randomUUID();
    const clock = opts.clock ?? systemClock;
    const caches = new Caches(clock);
    const stopListening = await listenForInvalidations(database, id, caches, log);
    const keyScope = { db: database.db, masterKey, caches, clock };
    const engine: Engine = {
      id,
      config,
      issuer: config.issuer,
      database,
      db: database.db,
      store: drizzleStore({
        db: database.db,
        caches,
        clock,
        id,
        database,
        keys: {
          signing: () => activeSigningKey(keyScope),
          verification: () => publicKeySet(keyScope),
          published: () => publicJwks(keyScope),
          sealer: tokenSealer(masterKey, config.issuer),
        },
      }),
      masterKey,
      clock,
      log,
      caches,
      memo: new Memo(),
      tokenThrottle: new TokenThrottle(clock, "token"),
      jwksThrottle: new TokenThrottle(clock, "jwks"),
      bootstrap: boot,
      mail: new Mailer({ db: database.db, caches, clock, config, masterKey, log, issuer: config.issuer }),
      background: new BackgroundTasks(log),
      close: async () => {
        await stopTimers();
        // The tasks may still write mail and audit events: before the mailer and the database close.
        await engine.background.close();
        await engine.mail.close();
        await stopListening();
        await database.close();
      },
    };
    const stopTimers = opts.timers === false ? () => Promise.resolve() : startMaintenance(engine);
    return engine;
  } catch (err) {
    await database.close().catch(() => {});
    throw err;
  }
}

async function rotationDue(db: Db, intervalSeconds: number, now: number): Promise<boolean> {
  const [newest] = await activeSigningKeys(db);
  return !newest || now - newest.createdAt.getTime() >= intervalSeconds * 1000;
}

/**
 * Every minute (sooner for short intervals): rotate the signing key when due, sweep expired rows,
 * and on PGlite, which has no autovacuum, vacuum the table that needs it most (pglite-vacuum.ts).
 * Returns what stops it: the timers, then the sweep in progress is waited for, so that the
 * database is never closed under it (the primary of IDP_WORKERS closes its engine right after the
 * first sweep began). A sweep never starts while the previous one runs.
 */
function startMaintenance(engine: Engine): () => Promise<void> {
  const interval = engine.config.keyRotationIntervalSeconds;
  let running: Promise<void> | undefined;
  const run = () => {
    running ??= sweep().finally(() => {
      running = undefined;
    });
  };
  const sweep = async () => {
    try {
      await purgeExpiredRows(engine.db, dateOf(engine.clock));
      const started = performance.now();
      const vacuumed = await vacuumMostDue(engine.database);
      if (vacuumed) engine.log.debug({ ...vacuumed, ms: Math.round(performance.now() - started) }, "table vacuumed");
      const removed = await removeExpiredKeys(engine, dateOf(engine.clock));
      if (removed.length) engine.log.info({ removed }, "expired signing keys removed");
      if (await rotationDue(engine.db, interval, engine.clock.now())) {
        const r = await rotateSigningKey(engine, { force: false, intervalSeconds: interval, publishDelaySeconds: engine.config.jwksMaxAgeSeconds });
        if (r.rotated) engine.log.info({ kid: r.kid, removed: r.removed }, "signing key rotated");
      }
    } catch (err) {
      engine.log.error({ errClass: (err as Error).name }, "maintenance failed");
    }
  };
  const timer = setInterval(run, Math.min(60, Math.max(5, Math.floor(interval / 10))) * 1000);
  timer.unref();
  // Mail retries come due on their own; new mail is sent at once (`mail.kick` after a commit).
  const mailTimer = setInterval(() => {
    engine.mail.kick();
  }, 15_000);
  mailTimer.unref();
  run();
  engine.mail.kick();
  return async () => {
    clearInterval(timer);
    clearInterval(mailTimer);
    await running;
  };
}
