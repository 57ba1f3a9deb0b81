import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Counts the database round trips (statements sent, including BEGIN/COMMIT) made while handling
 * one request, for `npm run bench`. Only created when IDP_DEBUG_DB_ROUND_TRIPS=1; otherwise the
 * database has no counter and nothing on the request path changes.
 */
export class RoundTripCounter {
  private readonly current = new AsyncLocalStorage<{ n: number }>();

  /** Runs `fn` with a fresh tally; every statement started inside it (also later, asynchronously) counts into it. */
  run<T>(fn: (tally: { readonly n: number }) => T): T {
    const tally = { n: 0 };
    return this.current.run(tally, () => fn(tally));
  }

  /** Called by the database layer for each statement. */
  count(statements = 1): void {
    const tally = this.current.getStore();
    if (tally) tally.n += statements;
  }
}

/** The response header that carries the count when counting is on. */
export const ROUND_TRIPS_HEADER = "x-torii-db-round-trips";

export function roundTripCountingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.IDP_DEBUG_DB_ROUND_TRIPS === "1";
}
