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

describe.skipIf(Boolean(skipReason))("npm run bench (smoke)", () => {
  it("runs every scenario on Torii, node-oidc-provider and the limit server and prints the table", { timeout: 15 * 60_000 }, async () => {
    const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "torii-bench-smoke-")), "result.json");
    const port = process.env.BENCH_SMOKE_PORT ?? "3270";
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, ["bench/run.mjs", "--duration=1", "--warmup=0", "--connections=4", `--port=${port}`, `--json=${json}`], {
        env: { ...process.env, DATABASE_URL: "" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
      child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
      child.on("exit", (code) => { resolve({ code, out }); });
    });
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
});
