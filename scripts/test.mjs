// `npm test`: every test runner, each printing its own summary, then one line with the totals.
//  0. ESLint over the whole tree (`npm run lint`: type-checked rules, no import cycles, the
//     core free of the framework), zero findings allowed; counted as one check
//  1. vitest on embedded PGlite
//  2. vitest on PostgreSQL, when TEST_DATABASE_URL is set (a fresh database per test file)
//  3. Playwright in Debian's Chromium against the production build (built first when stale), on
//     PGlite, and again on PostgreSQL when TEST_DATABASE_URL is set
//  4. the smoke test of `npm run bench` (test/bench-smoke.test.ts), last because it needs the
//     production build the browser tests just made (the vitest runs above skip it)
//  After each runner: no process it started may still be running (scripts/leftover-processes.mjs).
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { MARKER, reapLeftovers, ticksSinceBoot } from "./leftover-processes.mjs";

fs.mkdirSync("test-results", { recursive: true });
const results = [];

async function run(name, cmd, args, env, reportFile, count) {
  console.log(`\n=== ${name} ===`);
  if (reportFile) fs.rmSync(reportFile, { force: true });
  const runId = randomUUID();
  const started = ticksSinceBoot();
  const r = spawnSync(cmd, args, { stdio: "inherit", env: { ...process.env, ...env, [MARKER]: runId } });
  let counts = { passed: 0, failed: 0, skipped: 0, failures: [] };
  if (reportFile && fs.existsSync(reportFile)) counts = count(JSON.parse(fs.readFileSync(reportFile, "utf8")));
  const leftovers = await reapLeftovers(runId, started);
  for (const p of leftovers) console.error(`${name} left a process behind (killed): pid ${p.pid}: ${p.cmd}`);
  const ok = r.status === 0 && leftovers.length === 0;
  if (!ok && counts.failed === 0) counts.failed = 1; // the runner itself failed, or left processes behind
  results.push({ name, ...counts, ok });
}

// The summary names each failed test with its first error line, so that the tail of a CI log
// (often all that is kept) says what failed, not only how many.
const firstLine = (text) => String(text ?? "").replace(/\x1b\[[0-9;]*m/g, "").split("\n").find((l) => l.trim())?.trim().slice(0, 300) ?? "";
const vitestCounts = (j) => ({
  passed: j.numPassedTests ?? 0,
  failed: j.numFailedTests ?? 0,
  skipped: (j.numPendingTests ?? 0) + (j.numTodoTests ?? 0),
  failures: (j.testResults ?? []).flatMap((file) => {
    const path = file.name?.replace(`${process.cwd()}/`, "");
    const tests = (file.assertionResults ?? []).filter((t) => t.status === "failed");
    if (tests.length === 0 && file.status === "failed") return [`${path}: ${firstLine(file.message)}`];
    return tests.map((t) => `${path} › ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`);
  }),
});
function playwrightFailures(suite, file) {
  const here = suite.file ?? file;
  const own = (suite.specs ?? []).flatMap((spec) =>
    (spec.tests ?? [])
      .filter((t) => t.status === "unexpected")
      .map((t) => `${here}:${spec.line} › ${spec.title}: ${firstLine(t.results?.at(-1)?.error?.message)}`),
  );
  return [...own, ...(suite.suites ?? []).flatMap((s) => playwrightFailures(s, here))];
}
const playwrightCounts = (j) => ({
  passed: (j.stats?.expected ?? 0) + (j.stats?.flaky ?? 0),
  failed: j.stats?.unexpected ?? 0,
  skipped: j.stats?.skipped ?? 0,
  failures: (j.suites ?? []).flatMap((s) => playwrightFailures(s, s.file)),
});
const vitest = (file) => ["node_modules/vitest/vitest.mjs", "run", "--reporter=default", "--reporter=json", `--outputFile=${file}`];

await run("lint (ESLint, zero findings)", process.execPath, ["scripts/lint.mjs"], {}, null, null);
{
  const lint = results.at(-1);
  Object.assign(lint, lint.ok ? { passed: 1, failed: 0 } : { passed: 0, failed: 1 });
}

await run("vitest (PGlite)", process.execPath, vitest("test-results/vitest-pglite.json"), { TORII_TEST_DB: "pglite", TORII_BENCH_SMOKE: "0" }, "test-results/vitest-pglite.json", vitestCounts);

if (process.env.TEST_DATABASE_URL) {
  await run("vitest (PostgreSQL)", process.execPath, vitest("test-results/vitest-pg.json"), { TORII_TEST_DB: "pg", TORII_BENCH_SMOKE: "0" }, "test-results/vitest-pg.json", vitestCounts);
} else {
  console.log("\n=== vitest (PostgreSQL) ===\nskipped: set TEST_DATABASE_URL=postgres://... to run the suite against PostgreSQL too");
}

if (process.env.TORII_SKIP_E2E) {
  console.log("\n=== Playwright ===\nskipped: TORII_SKIP_E2E is set");
} else {
  const playwright = ["node_modules/@playwright/test/cli.js", "test"];
  await run("Playwright (Chromium, PGlite)", process.execPath, playwright, {}, "test-results/e2e.json", playwrightCounts);
  if (process.env.TEST_DATABASE_URL) {
    await run(
      "Playwright (Chromium, PostgreSQL)",
      process.execPath,
      playwright,
      { E2E_DATABASE_URL: process.env.TEST_DATABASE_URL, E2E_REPORT: "test-results/e2e-pg.json", E2E_OUTPUT_DIR: "test-results/e2e-pg" },
      "test-results/e2e-pg.json",
      playwrightCounts,
    );
  }
}

await run(
  "bench smoke (npm run bench, 1 s per scenario)",
  process.execPath,
  [...vitest("test-results/vitest-bench.json"), "test/bench-smoke.test.ts"],
  { TORII_BENCH_SMOKE: "1" },
  "test-results/vitest-bench.json",
  vitestCounts,
);

console.log("\n=== Summary ===");
for (const r of results) {
  console.log(`${r.name}: ${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped`);
  for (const f of r.failures ?? []) console.log(`  failed: ${f}`);
}
const total = results.reduce((a, r) => ({ passed: a.passed + r.passed, failed: a.failed + r.failed, skipped: a.skipped + r.skipped }), { passed: 0, failed: 0, skipped: 0 });
console.log(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
