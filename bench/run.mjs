#!/usr/bin/env node
// `npm run bench`: Torii (production build), node-oidc-provider 9 and a bare "limit" server, each
// in its own process on this machine, measured side by side with autocannon in alternating rounds
// (A B C C B A). See README.md, "Benchmark".
//
//   npm run bench -- [--duration=10] [--warmup=2] [--connections=16] [--db=pglite|pg]
//                    [--scenario=cc_jwt,introspect] [--targets=torii,peer,limit[,peer_db]]
//                    [--no-round-trips] [--profile] [--port=3250] [--json=FILE]
//                    [--workers=1,2,auto] [--torii-root=DIR] [--torii-node-args="--flag ..."]
//
// --db=pg (or DATABASE_URL set) runs Torii on a fresh database on that PostgreSQL server
// (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres), dropped at the end.
// --targets=...,peer_db (PostgreSQL only) adds node-oidc-provider on a fresh database of the same
// server (bench/servers/peer-pg-adapter.mjs), compared with Torii with both servers' database CPU.
// --workers (PostgreSQL only) also measures Torii with IDP_WORKERS set to each listed count
// besides 1 (e.g. 1,2,auto), each as a server of its own in the same alternating rounds.
// --torii-root runs the Torii build of another checkout (built there beforehand), to compare
// a change with what came before it under the same harness. --torii-node-args adds Node or V8
// options to Torii's command line after the ones `npm start` gives (a later flag wins), to
// compare those the same way.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { buildIsStale } from "../scripts/build-state.mjs";
import { cpuMsBetween, isStopping, stopAll } from "./lib/processes.mjs";
import { loadRequests, probe, SCENARIOS } from "./lib/scenarios.mjs";
import { prepare, startLimit, startPeer, startTorii } from "./lib/targets.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
process.chdir(root);

function options(argv) {
  const o = { duration: 10, warmup: 2, connections: 16, db: process.env.DATABASE_URL ? "pg" : "pglite", scenario: "", targets: "torii,peer,limit", roundTrips: true, profile: false, port: 3250, json: "", build: true, workers: "1", "torii-root": "", "torii-node-args": "" };
  for (const a of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a}`);
    const [, k, v] = m;
    if (k === "no-round-trips") o.roundTrips = false;
    else if (k === "no-build") o.build = false;
    else if (k === "profile") o.profile = true;
    else if (k === "help") o.help = true;
    else if (k in o && v !== undefined) o[k] = typeof o[k] === "number" ? Number(v) : v;
    else throw new Error(`unknown argument ${a}`);
  }
  for (const k of ["duration", "warmup", "connections", "port"]) if (!Number.isFinite(o[k]) || o[k] < 0) throw new Error(`--${k} must be a number`);
  if (!["pglite", "pg"].includes(o.db)) throw new Error("--db must be pglite or pg");
  o.workerCounts = [...new Set(String(o.workers).split(",").map((w) => w.trim()).filter(Boolean))];
  for (const w of o.workerCounts) if (w !== "auto" && !(Number.isInteger(Number(w)) && Number(w) >= 1)) throw new Error("--workers must list whole numbers or auto, e.g. 1,2,auto");
  if (o.workerCounts.some((w) => w !== "1") && o.db !== "pg") throw new Error("--workers other than 1 needs --db=pg (PGlite allows one process)");
  o.targetNames = o.targets.split(",").map((s) => s.trim());
  if (o.targetNames.includes("peer_db") && o.db !== "pg") throw new Error("--targets=peer_db needs --db=pg (it runs node-oidc-provider on that PostgreSQL server)");
  return o;
}

const opts = options(process.argv.slice(2));
const toriiRoot = opts["torii-root"] ? path.resolve(opts["torii-root"]) : root;
const extraNodeArgs = opts["torii-node-args"].split(/\s+/).filter(Boolean);
if (opts.help) {
  const lines = fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n");
  console.log(lines.slice(1, lines.findIndex((l, i) => i > 0 && !l.startsWith("//"))).join("\n").replace(/^\/\/ ?/gm, ""));
  process.exit(0);
}
const databaseUrl = opts.db === "pg" ? process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres" : undefined;
const wanted = opts.scenario ? opts.scenario.split(",").map((s) => s.trim()) : [];
const scenarios = SCENARIOS.filter((s) => !wanted.length || wanted.some((w) => s.id.includes(w)));
if (!scenarios.length) throw new Error(`no scenario matches ${opts.scenario}; there are ${SCENARIOS.map((s) => s.id).join(", ")}`);
const { targetNames } = opts;
const LABEL = { torii: "Torii", peer: "node-oidc-provider", peer_db: "node-oidc-provider, PostgreSQL", limit: "limit" };
/** The peer's targets (in memory, on PostgreSQL): a scenario it cannot serve is left out for both. */
const isPeer = (k) => k === "peer" || k === "peer_db";
const extraWorkers = opts.workerCounts.filter((w) => w !== "1");
for (const w of extraWorkers) LABEL[`torii_w${w}`] = `Torii, IDP_WORKERS=${w}`;

const fmt = (n, d = 0) => (n == null || Number.isNaN(n) ? "–" : n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d }));
const log = (...a) => console.log(...a);

async function main() {
  if (toriiRoot !== root) {
    if (!fs.existsSync(path.join(toriiRoot, "dist/server.mjs"))) throw new Error(`--torii-root: ${toriiRoot} has no build (dist/server.mjs); run npm run build there`);
  } else if (buildIsStale(root)) {
    if (!opts.build) throw new Error("the production build is missing or older than the sources: run npm run build (or leave out --no-build)");
    log("Building Torii (npm run build): the build is missing or older than the sources...");
    execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: ["ignore", "ignore", "inherit"] });
  }
  const oidcVersion = JSON.parse(fs.readFileSync("node_modules/oidc-provider/package.json", "utf8")).version;
  const load = os.loadavg().map((l) => l.toFixed(2)).join(" ");
  log(`Torii bench: ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), Node ${process.version}, load average ${load} at start`);
  log(`${opts.connections} connections, ${opts.duration} s per run after ${opts.warmup} s warm-up, rounds A B C C B A, Torii on ${databaseUrl ? "PostgreSQL" : "PGlite"}, node-oidc-provider ${oidcVersion}`);

  const poolSize = opts.connections * 4 + 8;
  const profileDir = path.join(root, "bench/results/profiles");
  const targets = {};
  if (targetNames.includes("torii")) {
    const nodeArgs = [...(opts.profile ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []), ...extraNodeArgs];
    if (opts.workerCounts.includes("1")) targets.torii = await startTorii({ root: toriiRoot, port: opts.port, databaseUrl, nodeArgs });
  }
  if (targetNames.includes("peer")) targets.peer = await startPeer({ root, port: opts.port + 2 });
  if (targetNames.includes("limit")) targets.limit = await startLimit({ root, port: opts.port + 3 });
  if (targetNames.includes("peer_db")) targets.peer_db = await startPeer({ root, port: opts.port + 4, databaseUrl, label: "node-oidc-provider (PostgreSQL)" });
  for (const [i, w] of extraWorkers.entries()) {
    if (targetNames.includes("torii")) targets[`torii_w${w}`] = await startTorii({ root: toriiRoot, port: opts.port + 10 + i, databaseUrl, nodeArgs: extraNodeArgs, workers: w, label: `torii (IDP_WORKERS=${w})` });
  }
  for (const t of Object.values(targets)) await prepare(t, { poolSize: scenarios.some((s) => s.id === "refresh") ? poolSize : 0 });
  const idleRss = Object.fromEntries(Object.entries(targets).map(([k, t]) => [k, t.proc.rssMb()]));

  // Correctness first: every scenario's steps must succeed on every target before anything is measured.
  const missing = {};
  for (const s of scenarios) {
    for (const [k, t] of Object.entries(targets)) {
      if (isPeer(k) && s.peerMissing) {
        missing[s.id] = s.peerMissing;
        continue;
      }
      await probe(t, s.steps(t));
    }
  }
  log("Every scenario answered correctly on every server (checked before measuring).");

  // Round trips: a second Torii with the counter on, so the measured one runs without it.
  let roundTrips = {};
  if (opts.roundTrips && targets.torii) {
    const counting = await startTorii({ root: toriiRoot, port: opts.port + 1, databaseUrl, countRoundTrips: true, label: "torii (counting)" });
    // One refresh token, presented to the process that issued it (by the code grant, then as a
    // successor), as every refresh of the measured runs is: its read is remembered.
    await prepare(counting, { poolSize: scenarios.some((s) => s.id === "refresh") ? 1 : 0 });
    // On PostgreSQL an instance answers a browser's read from memory only once its own writes to
    // the browser's tables (the sign-in above) have had time to commit (SETTLE_MS, 2 s, in
    // lib/db/write-notices.ts), as they long have when the measured runs start.
    if (databaseUrl) await new Promise((r) => setTimeout(r, 2100));
    for (const s of scenarios) {
      await probe(counting, s.steps(counting)); // first call warms caches
      const answers = await probe(counting, s.steps(counting));
      roundTrips[s.id] = answers.map((a) => ({ step: a.step, count: Number(a.headers["x-torii-db-round-trips"] ?? NaN) }));
    }
    await counting.proc.stop();
  }

  // Resident memory under load: each server's highest reading while it was measured (measure) and
  // a reading after each scenario, to see whether it levels off or keeps growing.
  const peakRss = { ...idleRss };
  const rssAfterScenario = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));

  const results = [];
  for (const s of scenarios) {
    const order = Object.keys(targets).filter((k) => !(isPeer(k) && s.peerMissing));
    const runs = Object.fromEntries(order.map((k) => [k, []]));
    const steps = Object.fromEntries(order.map((k) => [k, s.steps(targets[k])]));
    for (const k of order) if (opts.warmup > 0) await measure(targets[k], steps[k], opts.warmup);
    for (const k of [...order, ...[...order].reverse()]) {
      const run = await measure(targets[k], steps[k], opts.duration);
      peakRss[k] = Math.max(peakRss[k] ?? 0, run.peakRssMb ?? 0);
      runs[k].push(run);
    }
    const row = { scenario: s.id, title: s.title, stepsPerOp: steps[order[0]].length, roundTrips: roundTrips[s.id], targets: {} };
    for (const k of order) {
      const r = runs[k];
      row.targets[k] = {
        opsPerSec: r.reduce((a, x) => a + x.opsPerSec, 0) / r.length,
        p50: r.reduce((a, x) => a + x.p50, 0) / r.length,
        p99: Math.max(...r.map((x) => x.p99)),
        cpuMsPerOp: r.every((x) => x.cpuMsPerOp != null) ? r.reduce((a, x) => a + x.cpuMsPerOp, 0) / r.length : null,
        // Torii on PostgreSQL: that server's CPU time per operation (targets.mjs, dbCpu).
        dbCpuMsPerOp: r.every((x) => x.dbCpuMsPerOp != null) ? r.reduce((a, x) => a + x.dbCpuMsPerOp, 0) / r.length : null,
        errors: r.reduce((a, x) => a + x.errors, 0),
        errorSamples: r.flatMap((x) => x.errorSamples).slice(0, 3),
        runs: r,
      };
    }
    if (missing[s.id]) row.peerMissing = missing[s.id];
    const tt = row.targets;
    row.toriiPerPeer = tt.torii && tt.peer ? tt.torii.opsPerSec / tt.peer.opsPerSec : null;
    row.toriiPerLimit = tt.torii && tt.limit ? tt.torii.opsPerSec / tt.limit.opsPerSec : null;
    // The same ratio from CPU time per operation (peer's over Torii's: above 1 means Torii needs less).
    row.toriiPerPeerCpu = tt.torii?.cpuMsPerOp && tt.peer?.cpuMsPerOp ? tt.peer.cpuMsPerOp / tt.torii.cpuMsPerOp : null;
    row.toriiPerLimitCpu = tt.torii?.cpuMsPerOp && tt.limit?.cpuMsPerOp ? tt.limit.cpuMsPerOp / tt.torii.cpuMsPerOp : null;
    // ...and counting Torii's PostgreSQL server with it, since the peer and the limit keep everything in memory.
    const withDb = cpuWithDb(tt.torii);
    row.toriiWithDbPerPeerCpu = withDb && tt.peer?.cpuMsPerOp ? tt.peer.cpuMsPerOp / withDb : null;
    row.toriiWithDbPerLimitCpu = withDb && tt.limit?.cpuMsPerOp ? tt.limit.cpuMsPerOp / withDb : null;
    // ...and against the peer on the same PostgreSQL server, each with its database's CPU time.
    row.toriiPerPeerDb = tt.torii && tt.peer_db ? tt.torii.opsPerSec / tt.peer_db.opsPerSec : null;
    const peerWithDb = cpuWithDb(tt.peer_db);
    row.toriiWithDbPerPeerDbCpu = withDb && peerWithDb ? peerWithDb / withDb : null;
    results.push(row);
    printScenario(row);
    for (const [k, t] of Object.entries(targets)) rssAfterScenario[k].push(t.proc.rssMb());
  }

  const rss = Object.fromEntries(
    Object.entries(targets).map(([k, t]) => [k, { idleMb: idleRss[k], afterLoadMb: t.proc.rssMb(), peakMb: peakRss[k], afterEachScenarioMb: rssAfterScenario[k] }]),
  );
  log(`\nMemory (RSS, MB): ${Object.entries(rss).map(([k, v]) => `${LABEL[k]} ${v.idleMb} before load, ${v.afterLoadMb} after (at most ${v.peakMb})`).join("; ")}`);
  if (scenarios.length > 1) log(`RSS after each scenario (MB): ${Object.entries(rss).map(([k, v]) => `${LABEL[k]} ${v.afterEachScenarioMb.join(" · ")}`).join("; ")}`);
  log(`Load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  printSummary(results);

  const out = opts.json || path.join(root, "bench/results", `bench-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const machine = { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, node: process.version, loadAtStart: load, totalMemMb: Math.round(os.totalmem() / 2 ** 20) };
  fs.writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), options: { ...opts, db: databaseUrl ? "pg" : "pglite" }, machine, oidcProvider: oidcVersion, rss, results }, null, 2));
  log(`\nResults written to ${path.relative(root, out)}`);
  return results;
}

/** A target's CPU ms per operation with its PostgreSQL server's added; null without a database's figure. */
function cpuWithDb(v) {
  return v?.cpuMsPerOp && v.dbCpuMsPerOp != null ? v.cpuMsPerOp + v.dbCpuMsPerOp : null;
}

/** One autocannon run; ops are whole scenario iterations (the code flow is two requests). */
async function measure(t, steps, duration) {
  const tally = { failed: 0, samples: [] };
  const cpuBefore = t.proc.cpu();
  const dbCpuBefore = t.dbCpu?.();
  // The server's resident memory while it is under load, read once a second (each reading scans
  // /proc for its workers, on the load generator's thread).
  let peakRssMb = t.proc.rssMb();
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb ?? 0, t.proc.rssMb() ?? 0)), 1000);
  let r;
  try {
    r = await autocannon({ url: t.issuer, connections: opts.connections, duration, requests: loadRequests(steps, tally) });
  } finally {
    clearInterval(sampler);
  }
  const errors = tally.failed + r.errors + r.timeouts;
  const cpuAfter = t.proc.cpu();
  const dbCpuAfter = t.dbCpu?.();
  const ops = r.requests.total / steps.length;
  const perOp = (before, after) => (before == null || after == null || !ops ? null : cpuMsBetween(before, after) / ops);
  return {
    cpuMsPerOp: perOp(cpuBefore, cpuAfter),
    dbCpuMsPerOp: perOp(dbCpuBefore, dbCpuAfter),
    opsPerSec: r.requests.total / steps.length / r.duration,
    requests: r.requests.total,
    p50: r.latency.p50,
    p99: r.latency.p99,
    peakRssMb,
    errors,
    errorSamples: [...tally.samples, ...(r.errors ? [`${r.errors} socket errors`] : []), ...(r.timeouts ? [`${r.timeouts} timeouts`] : [])],
  };
}

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows.map((r, ri) => r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join("  ") + (ri === 0 ? "\n" + widths.map((w) => "-".repeat(w)).join("  ") : "")).join("\n");
}

function printScenario(row) {
  const unit = row.stepsPerOp > 1 ? "flows/s" : "req/s";
  log(`\n== ${row.scenario}: ${row.title}`);
  const withDb = Object.values(row.targets).some((v) => v.dbCpuMsPerOp != null);
  const rows = [["server", unit, "p50 ms", "p99 ms", "errors", "CPU ms/op", ...(withDb ? ["PostgreSQL CPU ms/op"] : [])]];
  for (const [k, v] of Object.entries(row.targets)) {
    rows.push([LABEL[k], fmt(v.opsPerSec), fmt(v.p50, 1), fmt(v.p99, 1), fmt(v.errors), fmt(v.cpuMsPerOp, 2), ...(withDb ? [fmt(v.dbCpuMsPerOp, 2)] : [])]);
  }
  log(table(rows));
  const ratios = [];
  if (row.toriiPerPeer != null) ratios.push(`Torii/peer ${fmt(row.toriiPerPeer, 2)}`);
  else if (row.peerMissing) ratios.push(`Torii/peer n/a (${row.peerMissing})`);
  if (row.toriiPerLimit != null) ratios.push(`Torii/limit ${fmt(row.toriiPerLimit, 2)}`);
  if (row.toriiPerPeerCpu != null || row.toriiPerLimitCpu != null) {
    ratios.push(`by CPU time per op: Torii/peer ${fmt(row.toriiPerPeerCpu, 2)}, Torii/limit ${fmt(row.toriiPerLimitCpu, 2)}`);
  }
  if (row.toriiWithDbPerPeerCpu != null || row.toriiWithDbPerLimitCpu != null) {
    ratios.push(`with Torii's PostgreSQL server: Torii/peer ${fmt(row.toriiWithDbPerPeerCpu, 2)}, Torii/limit ${fmt(row.toriiWithDbPerLimitCpu, 2)}`);
  }
  if (ratios.length) log(ratios.join(", "));
  if (row.toriiPerPeerDb != null) log(`Against node-oidc-provider on PostgreSQL: Torii/peer ${fmt(row.toriiPerPeerDb, 2)}, by CPU time per op with each one's PostgreSQL server ${fmt(row.toriiWithDbPerPeerDbCpu, 2)}`);
  if (row.roundTrips) log(`Torii database round trips per ${row.stepsPerOp > 1 ? "flow" : "request"}: ${row.roundTrips.map((r) => `${r.step} ${r.count}`).join(" + ")}`);
  for (const [k, v] of Object.entries(row.targets)) if (v.errors) log(`  ${LABEL[k]} errors (status or answer not the expected success), e.g.: ${v.errorSamples.join(" | ")}`);
}

function printSummary(results) {
  // On PostgreSQL: the CPU ratio to the peer again, with Torii's database server's CPU time added to Torii's.
  const withDb = results.some((r) => r.toriiWithDbPerPeerCpu != null);
  log(`\n== Summary (ops/s; ratios of ops/s, and of CPU ms per op${withDb ? ", also with Torii's PostgreSQL server's (T+db)" : ""}; p99 ms; errors; Torii's database round trips per op)`);
  const peerDb = results.some((r) => r.targets.peer_db);
  const rows = [["scenario", "Torii", "peer", "limit", "Torii/peer", "Torii/limit", "CPU T/p", "CPU T/l", ...(withDb ? ["CPU T+db/p"] : []), ...(peerDb ? ["peer on PG", "Torii/peer on PG", "CPU T+db/p+db"] : []), "Torii p99", "errors", "DB trips"]];
  for (const r of results) {
    const t = r.targets;
    rows.push([
      r.scenario,
      fmt(t.torii?.opsPerSec),
      r.peerMissing ? "n/a" : fmt(t.peer?.opsPerSec),
      fmt(t.limit?.opsPerSec),
      r.toriiPerPeer == null ? "n/a" : fmt(r.toriiPerPeer, 2),
      r.toriiPerLimit == null ? "–" : fmt(r.toriiPerLimit, 2),
      r.toriiPerPeerCpu == null ? (r.peerMissing ? "n/a" : "–") : fmt(r.toriiPerPeerCpu, 2),
      r.toriiPerLimitCpu == null ? "–" : fmt(r.toriiPerLimitCpu, 2),
      ...(withDb ? [r.toriiWithDbPerPeerCpu == null ? (r.peerMissing ? "n/a" : "–") : fmt(r.toriiWithDbPerPeerCpu, 2)] : []),
      ...(peerDb ? [r.peerMissing ? "n/a" : fmt(t.peer_db?.opsPerSec), r.toriiPerPeerDb == null ? "n/a" : fmt(r.toriiPerPeerDb, 2), r.toriiWithDbPerPeerDbCpu == null ? "n/a" : fmt(r.toriiWithDbPerPeerDbCpu, 2)] : []),
      fmt(t.torii?.p99, 1),
      fmt(Object.values(t).reduce((a, v) => a + v.errors, 0)),
      r.roundTrips ? r.roundTrips.map((x) => x.count).join("+") : "–",
    ]);
  }
  log(table(rows));
  if (extraWorkers.length) {
    log("\n== Workers (Torii on PostgreSQL; ops/s, p99 ms)");
    const keys = [...(opts.workerCounts.includes("1") ? ["torii"] : []), ...extraWorkers.map((w) => `torii_w${w}`)];
    const wrows = [["scenario", ...keys.map((k) => (k === "torii" ? "IDP_WORKERS=1" : LABEL[k].replace("Torii, ", "")))]];
    for (const r of results) wrows.push([r.scenario, ...keys.map((k) => (r.targets[k] ? `${fmt(r.targets[k].opsPerSec)} (${fmt(r.targets[k].p99, 1)})` : "–"))]);
    log(table(wrows));
  }
}

let code = 0;
try {
  const results = await main();
  if (results.some((r) => Object.values(r.targets).some((v) => v.errors))) {
    console.error("\nSome answers were errors (see above): those figures are not comparable.");
    code = 1;
  }
} catch (err) {
  if (!isStopping()) console.error(`\nbench failed: ${err instanceof Error ? err.stack : err}`);
  code = 1;
} finally {
  await stopAll();
}
process.exit(code);
