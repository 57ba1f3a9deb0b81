import type { Clock } from "@/lib/clock";
import { notifyOnCommit, type Database, type Db, type Tx } from "@/lib/db/client";
import type { Logger } from "@/lib/log";
import type { CacheName, Caches } from "./caches";

/** What a change makes stale: a whole cache, or one key of it. */
export type Invalidation = { cache: CacheName; key?: string };

/** What `mutate` needs of the engine. */
export type MutationScope = { db: Db; caches: Caches; clock: Clock; id: string; database: Pick<Database, "kind"> };

/** The PostgreSQL channel on which instances tell each other what changed. */
export const INVALIDATION_CHANNEL = "torii_cache";

/**
 * Runs `fn` in one transaction and, once it has committed, drops what it changed from the caches:
 * here at once, and on every other instance on the same PostgreSQL through NOTIFY, which
 * PostgreSQL delivers only on commit (a rolled-back change tells nobody). Dropping inside the
 * transaction would not do: a request reading before the commit refills the cache with the old
 * row, which then stays for the cache's lifetime.
 */
export async function mutate<T>(
  scope: MutationScope,
  changes: Invalidation[] | ((result: T) => Invalidation[]),
  fn: (tx: Tx) => Promise<T>,
): Promise<T> {
  let list: Invalidation[] = [];
  const result = await scope.db.transaction(async (tx) => {
    const r = await fn(tx);
    list = typeof changes === "function" ? changes(r) : changes;
    if (list.length && scope.database.kind === "pg") {
      await notifyOnCommit(tx, INVALIDATION_CHANNEL, JSON.stringify({ from: scope.id, list }));
    }
    return r;
  });
  applyInvalidations(scope.caches, list);
  return result;
}

export function applyInvalidations(caches: Caches, list: Invalidation[]): void {
  for (const c of list) caches.invalidate(c.cache, c.key);
}

/**
 * Listens for other instances' changes (PostgreSQL only; PGlite has one process). When the
 * listening connection is lost, notifications may have been missed: every cache is dropped,
 * and the caches' short lifetimes bound the staleness until the connection is back.
 */
export async function listenForInvalidations(
  database: Database,
  self: string,
  caches: Caches,
  log: Logger,
): Promise<() => Promise<void>> {
  if (!database.listen) return async () => {};
  return database.listen(
    INVALIDATION_CHANNEL,
    (payload) => {
      try {
        const msg = JSON.parse(payload) as { from?: string; list?: Invalidation[] };
        if (msg.from !== self && Array.isArray(msg.list)) applyInvalidations(caches, msg.list);
      } catch {
        caches.invalidateAll();
      }
    },
    (err) => {
      caches.invalidateAll();
      log.warn({ errClass: err.name }, "cache invalidation listener lost its connection; reconnecting");
    },
  );
}
