import { SlidingWindow } from "./sliding-window";
import type { Store } from "@/lib/store/repositories";
import type { Clock } from "@/lib/clock";

type SharedCounter = Store["rateLimits"];

/**
 * The token endpoint's rate limit, `rateLimits.tokenPerMinute` (issue 16), per client address
 * and per authenticated client; the key set's, `rateLimits.jwksPerMinute`, per client address.
 *
 * Where it is counted: in process, a sliding window per instance (lib/http/sliding-window.ts),
 * because a database write on every token request would halve the endpoint's throughput. What
 * crosses instances: each instance adds what it counted to the shared per-minute counter in
 * the database (lib/store/rate-limit.ts) in batches, one write per tenth of the limit per key,
 * not awaited by the request, and learns from the answer how much the other instances counted in
 * the same minute; that count is subtracted from what it still admits locally. So with N
 * instances the limit holds within about a tenth of it per instance, at one write per
 * `limit / 10` requests of a key instead of one per request.
 */
const WINDOW_SECONDS = 60;

type Shared = { window: number; unsynced: number; ownSynced: number; others: number; syncing: boolean };

export class TokenThrottle {
  /** `prefix` names this limit's rows among the shared counters: `token`, `jwks`; windows turn by the engine's clock. */
  constructor(
    private readonly clock: Clock,
    private readonly prefix = "token",
  ) {
    this.failures = new FailureSampler(clock, WINDOW_SECONDS * 1000);
  }

  private readonly local = new SlidingWindow(WINDOW_SECONDS * 1000);
  private readonly shared = new Map<string, Shared>();
  readonly failures: FailureSampler;

  /** Counts one token request under `key` (`addr:…` or `client:…`); `allowed: false` means 429. */
  hit(counter: SharedCounter, key: string, limit: number, now = this.clock.now()): { allowed: boolean; retryAfterSeconds: number } {
    const window = Math.floor(now / (WINDOW_SECONDS * 1000));
    let s = this.shared.get(key);
    if (!s || s.window !== window) {
      if (!s && this.shared.size >= 100_000) this.shared.clear();
      s = { window, unsynced: 0, ownSynced: 0, others: 0, syncing: false };
      this.shared.set(key, s);
    }
    const r = this.local.hit(key, Math.max(0, limit - s.others), now);
    if (!r.allowed) return r;
    s.unsynced += 1;
    const batch = Math.max(1, Math.floor(limit / 10));
    if (!s.syncing && s.unsynced >= batch) void this.sync(counter, key, s, now, batch);
    return r;
  }

  private async sync(counter: SharedCounter, key: string, s: Shared, now: number, batch: number): Promise<void> {
    const delta = s.unsynced;
    s.unsynced = 0;
    s.syncing = true;
    let written = false;
    try {
      const { count } = await counter.hit(`${this.prefix}:${key}`, Number.MAX_SAFE_INTEGER, WINDOW_SECONDS, new Date(now), delta);
      s.ownSynced += delta;
      s.others = Math.max(0, count - s.ownSynced);
      written = true;
    } catch {
      // The limit still holds per instance; the shared count catches up with the next batch.
      // (Not logged: a failing database shows in every other request's log already.)
      s.unsynced += delta;
    } finally {
      s.syncing = false;
    }
    // Requests counted while this batch was on its way form the next one, so that a full batch
    // is never left waiting for a request that may not come (after a failure, the next request
    // tries again).
    if (written && s.unsynced >= batch) await this.sync(counter, key, s, this.clock.now(), batch);
  }
}

/**
 * Which failed client authentications are written to the audit log: the first per key (client
 * id and address) in each minute, carrying how many were left out since the last one written,
 * and at most `perWindow` events per minute in all. An attack therefore adds a bounded number of
 * audit rows, and the counts still show its size.
 */
export class FailureSampler {
  private readonly keys = new Map<string, { window: number; suppressed: number }>();
  private window = -1;
  private written = 0;
  private overflow = 0;

  constructor(
    private readonly clock: Clock,
    private readonly windowMs: number,
    private readonly perWindow = 60,
  ) {}

  /** Whether to write this failure, and how many failures of `key` (or, `overall`, of all keys over the budget) went unwritten before it. */
  sample(key: string, now = this.clock.now()): { write: boolean; suppressed: number; overall: number } {
    const window = Math.floor(now / this.windowMs);
    if (window !== this.window) {
      this.window = window;
      this.written = 0;
      if (this.keys.size > 100_000) this.keys.clear();
    }
    const k = this.keys.get(key);
    if (k && k.window === window) {
      k.suppressed += 1;
      return { write: false, suppressed: 0, overall: 0 };
    }
    if (this.written >= this.perWindow) {
      this.overflow += 1;
      return { write: false, suppressed: 0, overall: 0 };
    }
    this.written += 1;
    const suppressed = k?.suppressed ?? 0;
    const overall = this.overflow;
    this.overflow = 0;
    this.keys.set(key, { window, suppressed: 0 });
    return { write: true, suppressed, overall };
  }
}
