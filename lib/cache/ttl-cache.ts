import type { Clock } from "@/lib/clock";

/**
 * A small read-through cache: values live `ttlMs`, concurrent misses share one load, and a
 * failed load is never cached. Every cache of the engine is one of these (lib/store/caches.ts),
 * so that expiry and invalidation work the same way everywhere.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { at: number; value: Promise<V> }>();

  constructor(
    /** The engine's clock (lib/clock.ts). */
    private readonly clock: Clock,
    readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && this.clock.now() - hit.at < this.ttlMs) return hit.value;
    const value = load();
    const entry = this.set(key, value);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return value;
  }

  /** Keeps `value` under `key`, for a later `take` (a write-through entry rather than a load). */
  put(key: string, value: V): void {
    this.set(key, Promise.resolve(value));
  }

  /** The fresh value under `key`, removed: each entry is answered once. */
  take(key: string): Promise<V> | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    return this.clock.now() - hit.at < this.ttlMs ? hit.value : undefined;
  }

  private set(key: string, value: Promise<V>): { at: number; value: Promise<V> } {
    // A bounded map: past the limit it starts over rather than growing with hostile keys.
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    const entry = { at: this.clock.now(), value };
    this.entries.set(key, entry);
    return entry;
  }

  /** Drops one key, or everything. */
  invalidate(key?: string): void {
    if (key === undefined) this.entries.clear();
    else this.entries.delete(key);
  }
}
