import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without type declarations
import { cpuByProcess, cpuMsBetween } from "../bench/lib/processes.mjs";

/** How the bench adds up the CPU time of a server made of several processes (PostgreSQL's backends). */
describe("cpuMsBetween", () => {
  it("adds what each process used since the first reading, and all of a new process's time", () => {
    const before = new Map([[10, 500], [11, 40]]);
    const after = new Map([[10, 650], [11, 40], [12, 30]]);
    expect(cpuMsBetween(before, after)).toBe(150 + 0 + 30);
  });

  it("leaves out a process that exited instead of taking its earlier time off, and counts a reused id as new", () => {
    const before = new Map([[10, 500], [11, 900]]);
    const after = new Map([[10, 520], [11, 5]]); // 11 exited and its id went to a new process
    expect(cpuMsBetween(before, after)).toBe(20 + 5);
    expect(cpuMsBetween(new Map([[10, 500], [13, 70]]), new Map([[10, 500]]))).toBe(0);
  });

  it("reads this process from /proc, and nothing for a process that does not exist", () => {
    const mine = cpuByProcess(process.pid);
    expect(mine.get(process.pid)).toBeGreaterThan(0);
    expect(cpuByProcess(2 ** 22 + 1)).toBeNull();
  });
});
