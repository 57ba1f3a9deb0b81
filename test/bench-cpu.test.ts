import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without type declarations
import { assertPortFree, cpuByProcess, cpuMsBetween, startNode } from "../bench/lib/processes.mjs";
import http from "node:http";
import type { AddressInfo } from "node:net";

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

/** A server left listening on a bench port would answer for the one the bench starts there. */
describe("the bench's ports", () => {
  it("a port something listens on is refused with its number before anything starts; a free one passes", async () => {
    const other = http.createServer((_req, res) => res.end("ok"));
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const port = (other.address() as AddressInfo).port;
    try {
      await expect(assertPortFree(port, "torii")).rejects.toThrow(new RegExp(`port ${port}, for torii, is in use`));
      await expect(startNode("torii", ["-e", "process.exit(3)"], { env: process.env, port, readyLine: "ready" })).rejects.toThrow(/is in use/);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
    await expect(assertPortFree(port)).resolves.toBeUndefined();
  });
});
