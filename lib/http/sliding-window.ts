/**
 * An in-process sliding-window counter (the weighted two-window approximation): per key the
 * count of the current fixed window plus the previous window's count weighted by how much of it
 * still lies inside the sliding window. O(1) time and two numbers per key, no I/O: cheap enough
 * for every request on the token endpoint. Keys are dropped once their windows have passed, and
 * the table never holds more than `maxKeys` keys (the oldest go first).
 */
export type WindowHit = { allowed: boolean; count: number; retryAfterSeconds: number };

type Entry = { start: number; current: number; previous: number };

export class SlidingWindow {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly windowMs: number,
    private readonly maxKeys = 100_000,
  ) {}

  /** Counts one event for `key` at `now` and says whether it is within `limit` per window. */
  hit(key: string, limit: number, now: number): WindowHit {
    const e = this.advance(key, now);
    const estimate = this.estimate(e, now);
    if (estimate + 1 > limit) return { allowed: false, count: Math.ceil(estimate), retryAfterSeconds: this.retryAfter(e, limit, now) };
    e.current += 1;
    return { allowed: true, count: Math.ceil(estimate + 1), retryAfterSeconds: 0 };
  }

  /** Adds `n` events counted elsewhere (another instance) to the current window of `key`. */
  add(key: string, n: number, now: number): void {
    if (n > 0) this.advance(key, now).current += n;
  }

  private advance(key: string, now: number): Entry {
    const start = Math.floor(now / this.windowMs) * this.windowMs;
    let e = this.entries.get(key);
    if (!e) {
      if (this.entries.size >= this.maxKeys) this.prune(now);
      e = { start, current: 0, previous: 0 };
      this.entries.set(key, e);
    } else if (e.start !== start) {
      e.previous = e.start === start - this.windowMs ? e.current : 0;
      e.current = 0;
      e.start = start;
    }
    return e;
  }

  private estimate(e: Entry, now: number): number {
    const elapsed = (now - e.start) / this.windowMs;
    return e.previous * (1 - elapsed) + e.current;
  }

  /** When the weighted previous window will have slid out far enough to admit one more event. */
  private retryAfter(e: Entry, limit: number, now: number): number {
    const end = e.start + this.windowMs;
    if (e.current + 1 > limit || e.previous === 0) return Math.max(1, Math.ceil((end - now) / 1000));
    // previous * (1 - (t - start) / window) + current + 1 <= limit  →  solve for t.
    const t = e.start + this.windowMs * (1 - (limit - e.current - 1) / e.previous);
    return Math.max(1, Math.ceil((Math.min(t, end) - now) / 1000));
  }

  private prune(now: number): void {
    const stale = now - 2 * this.windowMs;
    for (const [k, e] of this.entries) if (e.start < stale) this.entries.delete(k);
    // Still full (an attack spreads over many keys): drop the oldest half, in insertion order.
    if (this.entries.size >= this.maxKeys) {
      let drop = this.entries.size / 2;
      for (const k of this.entries.keys()) {
        if (drop-- <= 0) break;
        this.entries.delete(k);
      }
    }
  }
}
