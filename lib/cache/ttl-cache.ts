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
    // A bounded map: past the limit it starts over rather than growing with hostile keys.
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    const entry = { at: this.clock.now(), value };
    this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return value;
  }

  /** Drops one key, or everything. */
  invalidate(key?: string): void {
    if (key === undefined) this.entries.clear();
    else this.entries.delete(key);
  }
}
