import type { Clock } from "@/lib/clock";

/** A clock that moves only when told: tests advance time instead of sleeping. */
export class FakeClock implements Clock {
  constructor(private ms: number = Date.UTC(2026, 0, 1)) {}

  now(): number {
    return this.ms;
  }

  /** Moves time forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.ms += ms;
  }

  /** Moves time forward by `s` seconds. */
  advanceSeconds(s: number): void {
    this.ms += s * 1000;
  }
}
