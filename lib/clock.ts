/**
 * The engine's clock (docs/architecture.md, "The clock"). The core reads the time only through
 * it, never from `Date.now()` or `new Date()`, so that tests move time with a fake clock
 * (test/fakes/fake-clock.ts) instead of sleeping, and every part of one request sees one notion of
 * "now". The database's own `now()` is not this clock: the core passes its time into queries.
 */
export type Clock = {
  /** Milliseconds since the epoch. */
  now(): number;
};

/** The process's wall clock: the only place in the core that reads it. */
export const systemClock: Clock = { now: () => Date.now() };

/** The clock's time as a Date (for rows and comparisons with stored timestamps). */
export function dateOf(clock: Clock): Date {
  return new Date(clock.now());
}

/** The clock's time in whole seconds since the epoch (JWT `iat`/`exp`). */
export function secondsOf(clock: Clock): number {
  return Math.floor(clock.now() / 1000);
}
