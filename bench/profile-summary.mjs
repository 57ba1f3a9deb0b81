#!/usr/bin/env node
// Summarises a V8 CPU profile (node --cpu-prof, e.g. from `npm run bench -- --profile`):
// the functions with the most self time, self time by package/area, and the inclusive time of
// the functions that matter on Torii's hot path.
//
//   node bench/profile-summary.mjs bench/results/profiles/CPU.*.cpuprofile [--top=30] [--last=15] [--focus=toWebRequest,handleToken]
//
// --last=N keeps only the samples of the last N seconds before the process stopped: the profile
// covers the whole process (start-up, migrations, setup), the load is its end.
import fs from "node:fs";

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith("--"));
if (!file) throw new Error("usage: node bench/profile-summary.mjs <file.cpuprofile> [--top=N] [--focus=a,b]");
const top = Number(args.find((a) => a.startsWith("--top="))?.slice(6) ?? 30);
const focus = (args.find((a) => a.startsWith("--focus="))?.slice(8) ?? "toWebRequest,sendWebResponse,readBody,handleToken,handleIntrospect,authenticateClient,getSettings,findClient,signJwt,issueAccessToken,createServer").split(",");

const last = Number(args.find((a) => a.startsWith("--last="))?.slice(7) ?? 0);
const prof = JSON.parse(fs.readFileSync(file, "utf8"));
if (last > 0) {
  // Sample i was taken at startTime + the sum of timeDeltas up to i; zero the deltas before the window.
  const from = prof.endTime - last * 1e6;
  let t = prof.startTime;
  prof.timeDeltas = prof.timeDeltas.map((d) => ((t += d), t < from ? 0 : d));
}
const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
const dt = new Map();
for (let i = 0; i < prof.samples.length; i++) dt.set(prof.samples[i], (dt.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0));
const total = [...dt.values()].reduce((a, b) => a + b, 0);
const pct = (us) => ((100 * us) / total).toFixed(1).padStart(5) + " %";

function area(url, name) {
  if (!url) return name === "(garbage collector)" ? "GC" : name === "(idle)" || name === "(program)" ? name : "native/builtin";
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  if (url.startsWith("node:")) return url.replace(/^node:internal\//, "node:").split("/").slice(0, 2).join("/");
  if (url.includes("/dist/server.mjs")) return "torii (dist/server.mjs)";
  if (url.includes("/.next/")) return "next build chunks";
  return url;
}

const self = new Map();
const byArea = new Map();
for (const n of prof.nodes) {
  const t = dt.get(n.id) ?? 0;
  if (!t) continue;
  const { functionName, url, lineNumber } = n.callFrame;
  const key = `${functionName || "(anonymous)"}  ${url.replace(/^.*\/(node_modules|dist|\.next)\//, "$1/")}:${lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + t);
  const a = area(url, functionName);
  byArea.set(a, (byArea.get(a) ?? 0) + t);
}

// Inclusive time per focus function name, counted once per stack even under recursion.
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const inclusive = new Map(focus.map((f) => [f, 0]));
for (const [id, t] of dt) {
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const name = nodes.get(cur).callFrame.functionName;
    if (inclusive.has(name) && !seen.has(name)) (seen.add(name), inclusive.set(name, inclusive.get(name) + t));
  }
}

const busy = total - (byArea.get("(idle)") ?? 0);
console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s not idle`);
console.log(`\nSelf time by area:`);
for (const [a, t] of [...byArea].sort((x, y) => y[1] - x[1]).slice(0, 25)) console.log(`${pct(t)}  ${a}`);
console.log(`\nTop ${top} functions by self time:`);
for (const [k, t] of [...self].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`${pct(t)}  ${k}`);
console.log(`\nInclusive time of hot-path functions:`);
for (const [f, t] of inclusive) if (t) console.log(`${pct(t)}  ${f}`);
