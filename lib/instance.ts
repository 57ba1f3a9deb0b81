import { asc, eq } from "drizzle-orm";
import { signingKeys } from "@/db/schema";
import { bootstrap, type BootstrapResult } from "@/lib/bootstrap";
import { config, type Config } from "@/lib/config";
import { openDatabase, type Database, type Db } from "@/lib/db/client";
import { migrate } from "@/lib/db/migrate";
import { removeExpiredKeys, rotateSigningKey } from "@/lib/keys/signing-keys";
import { log } from "@/lib/log";
import { purgeExpiredRows } from "@/lib/maintenance";
import { resolveMasterKey } from "@/lib/master-key";
import { TokenThrottle } from "@/lib/oauth/token-throttle";

export type Instance = {
  config: Config;
  database: Database;
  db: Db;
  masterKey: Buffer;
  bootstrap: BootstrapResult;
  /** The token endpoint's per-instance rate-limit windows and audit sampling (lib/oauth/token-throttle.ts). */
  tokenThrottle: TokenThrottle;
};

/**
 * One per process, on globalThis: Next's server bundle and server.ts each hold a copy of this
 * module, and two PGlite instances on one data folder would corrupt it.
 */
const INSTANCE = Symbol.for("torii.instance");
type G = typeof globalThis & { [INSTANCE]?: Promise<Instance>; [TIMER]?: NodeJS.Timeout };
const TIMER = Symbol.for("torii.keyRotationTimer");

export function instance(): Promise<Instance> {
  const g = globalThis as G;
  if (!g[INSTANCE]) {
    g[INSTANCE] = start(config()).catch((err) => {
      g[INSTANCE] = undefined;
      throw err;
    });
  }
  return g[INSTANCE];
}

/** Shortcut for handlers: the database of the started instance. */
export async function db(): Promise<Db> {
  return (await instance()).db;
}

async function start(cfg: Config): Promise<Instance> {
  const masterKey = resolveMasterKey(cfg.masterKey, cfg.dataDir);
  const database = openDatabase({ databaseUrl: cfg.databaseUrl, dataDir: cfg.dataDir, inMemory: cfg.inMemory });
  const { applied } = await migrate(database);
  if (applied) log().info({ applied }, "database migrated");
  const boot = await bootstrap(database.db, {
    issuer: cfg.issuer,
    masterKey,
    adminPat: cfg.adminPat,
    dataDir: cfg.dataDir,
  });
  const inst: Instance = { config: cfg, database, db: database.db, masterKey, bootstrap: boot, tokenThrottle: new TokenThrottle() };
  startKeyRotation(inst);
  return inst;
}

async function rotationDue(db: Db, intervalSeconds: number, now = Date.now()): Promise<boolean> {
  const [newest] = await db
    .select({ createdAt: signingKeys.createdAt })
    .from(signingKeys)
    .where(eq(signingKeys.status, "active"))
    .orderBy(asc(signingKeys.createdAt));
  return !newest || now - newest.createdAt.getTime() >= intervalSeconds * 1000;
}

/** Every minute (sooner for short intervals): rotate the signing key when due, sweep expired rows. */
function startKeyRotation(inst: Instance): void {
  const g = globalThis as G;
  if (g[TIMER]) return;
  const interval = inst.config.keyRotationIntervalSeconds;
  const tick = async () => {
    try {
      await purgeExpiredRows(inst.db);
      const removed = await removeExpiredKeys(inst.db);
      if (removed.length) log().info({ removed }, "expired signing keys removed");
      if (await rotationDue(inst.db, interval)) {
        const r = await rotateSigningKey(inst.db, inst.masterKey, { force: false, intervalSeconds: interval });
        if (r.rotated) log().info({ kid: r.kid, removed: r.removed }, "signing key rotated");
      }
    } catch (err) {
      log().error({ err }, "signing key rotation failed");
    }
  };
  g[TIMER] = setInterval(tick, Math.min(60, Math.max(5, Math.floor(interval / 10))) * 1000);
  g[TIMER].unref();
  void tick();
}

export async function stopInstance(): Promise<void> {
  const g = globalThis as G;
  if (g[TIMER]) clearInterval(g[TIMER]);
  g[TIMER] = undefined;
  const p = g[INSTANCE];
  g[INSTANCE] = undefined;
  if (p) await (await p).database.close();
}
