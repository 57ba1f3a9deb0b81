/**
 * Smoke test of `npm run bench`: every scenario for about a second against the production build,
 * checking that the harness starts its three servers, gets a correct answer everywhere and prints
 * the table. Speed is never asserted here (that is the benchmark's job, not a unit test's).
 *
 * It needs the production build. `npm test` runs it after the browser tests, which build first
 * (TORII_BENCH_SMOKE=1: build when stale); in a plain `npx vitest run` it runs when the build is
 * up to date and is skipped, saying so, when it is not.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without type declarations
import { buildIsStale } from "../scripts/build-state.mjs";

const mode = process.env.TORII_BENCH_SMOKE; // "1": always (builds if needed), "0": never
const stale: boolean = buildIsStale();
const skipReason =
  mode === "0"
    ? "TORII_BENCH_SMOKE=0 (npm test runs it after the browser tests)"
    : mode !== "1" && stale
      ? "the production build is missing or older than the sources: run npm run build, or set TORII_BENCH_SMOKE=1 to build"
      : undefined;
if (skipReason) console.log(`bench smoke test skipped: ${skipReason}`);

const SCENARIOS = ["cc_jwt", "cc_opaque", "refresh", "introspect_opaque", "introspect_jwt", "userinfo", "code_flow", "jwks", "discovery"];

/** `node bench/run.mjs <args>`, its exit code and everything it printed. */
function bench(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["bench/run.mjs", ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.on("exit", (code) => {
      resolve({ code, out });
    });
  });
}

describe.skipIf(Boolean(skipReason))("npm run bench (smoke)", () => {
  it("runs every scenario on Torii, node-oidc-provider and the limit server and prints the table", { timeout: 15 * 60_000 }, async () => {
    const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "torii-bench-smoke-")), "result.json");
    const port = process.env.BENCH_SMOKE_PORT ?? "3270";
    const { code, out } = await bench(["--duration=1", "--warmup=0", "--connections=4", `--port=${port}`, `--json=${json}`], { DATABASE_URL: "" });
    expect(out, out).toContain("Every scenario answered correctly on every server");
    expect(code, out).toBe(0);
    const summary = out.slice(out.indexOf("== Summary"));
    expect(summary).toMatch(/scenario\s+Torii\s+peer\s+limit\s+Torii\/peer\s+Torii\/limit/);
    for (const s of SCENARIOS) expect(summary).toMatch(new RegExp(`^${s}\\s+[\\d,]+\\s+(?:[\\d,]+|n/a)\\s+[\\d,]+\\s+(?:\\d+\\.\\d\\d|n/a)\\s+\\d+\\.\\d\\d`, "m"));
    const result = JSON.parse(fs.readFileSync(json, "utf8"));
    expect(result.results.map((r: { scenario: string }) => r.scenario)).toEqual(SCENARIOS);
    for (const r of result.results) {
      expect(r.targets.torii.opsPerSec).toBeGreaterThan(0);
      expect(r.roundTrips.every((x: { count: number }) => Number.isInteger(x.count))).toBe(true);
    }
    fs.rmSync(path.dirname(json), { recursive: true, force: true });
  });

  // On PostgreSQL the database's work happens in another process; the bench counts that server's
  // CPU time per operation too, and the CPU ratio with it (bench/lib/targets.mjs, dbCpu). The
  // peer_db target runs node-oidc-provider on the same server (bench/servers/peer-pg-adapter.mjs).
  it.skipIf(!process.env.TEST_DATABASE_URL)(
    "on PostgreSQL, prints the database server's CPU time per operation, the ratio counting it, and the peer on the same database",
    { timeout: 10 * 60_000 },
    async () => {
      const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "torii-bench-smoke-")), "result.json");
      const port = Number(process.env.BENCH_SMOKE_PORT ?? "3270") + 20;
      const args = ["--db=pg", "--scenario=refresh,code_flow", "--targets=torii,peer,peer_db", "--no-round-trips", "--duration=1", "--warmup=0", "--connections=4", `--port=${port}`, `--json=${json}`];
      const { code, out } = await bench(args, { DATABASE_URL: process.env.TEST_DATABASE_URL! });
      expect(code, out).toBe(0);
      expect(out).toContain("Every scenario answered correctly on every server");
      expect(out).toMatch(/server\s+req\/s\s+p50 ms\s+p99 ms\s+errors\s+CPU ms\/op\s+PostgreSQL CPU ms\/op/);
      expect(out).toMatch(/^Torii\s+[\d,]+\s+[\d.]+\s+[\d.]+\s+0\s+\d+\.\d\d\s+\d+\.\d\d$/m);
      expect(out).toMatch(/^node-oidc-provider, PostgreSQL\s+[\d,]+\s+[\d.]+\s+[\d.]+\s+0\s+\d+\.\d\d\s+\d+\.\d\d$/m);
      expect(out).toMatch(/with Torii's PostgreSQL server: Torii\/peer \d+\.\d\d/);
      expect(out).toMatch(/Against node-oidc-provider on PostgreSQL: Torii\/peer \d+\.\d\d, by CPU time per op with each one's PostgreSQL server \d+\.\d\d/);
      expect(out.slice(out.indexOf("== Summary"))).toMatch(/CPU T\+db\/p\s+peer on PG\s+Torii\/peer on PG\s+CPU T\+db\/p\+db/);
      const rows = JSON.parse(fs.readFileSync(json, "utf8")).results;
      expect(rows.map((r: { scenario: string }) => r.scenario)).toEqual(["refresh", "code_flow"]);
      for (const row of rows) {
        // Both write on every operation: the database server did some work for each, and less than a second's.
        for (const t of [row.targets.torii, row.targets.peer_db]) {
          expect(t.dbCpuMsPerOp).toBeGreaterThan(0);
          expect(t.dbCpuMsPerOp).toBeLessThan(1000);
        }
        expect(row.targets.peer.dbCpuMsPerOp).toBeNull();
        expect(row.toriiWithDbPerPeerCpu).toBeLessThan(row.toriiPerPeerCpu);
        expect(row.toriiPerPeerDb).toBeGreaterThan(0);
        expect(row.toriiWithDbPerPeerDbCpu).toBeGreaterThan(0);
      }
      fs.rmSync(path.dirname(json), { recursive: true, force: true });
    },
  );

  it("refuses the peer on PostgreSQL without --db=pg", async () => {
    const { code, out } = await bench(["--targets=torii,peer_db", "--duration=1"], { DATABASE_URL: "" });
    expect(code).not.toBe(0);
    expect(out).toContain("--targets=peer_db needs --db=pg");
  });
});
