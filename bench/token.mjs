#!/usr/bin/env node
// Load benchmark of the token endpoint: the client-credentials grant against the production
// build, with autocannon. Not part of `npm test`.
//
//   node bench/token.mjs            (builds into .next-bench on first run)
//   BENCH_PORT=3300 BENCH_DURATION=10 BENCH_CONNECTIONS=16 BENCH_ACCESS_TOKEN_TYPE=opaque node bench/token.mjs
//
// The Next build goes to its own folder (NEXT_DIST_DIR, default .next-bench) and server.ts is
// compiled next to it, so the benchmark never overwrites a build someone else is using.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const distDir = process.env.NEXT_DIST_DIR ?? ".next-bench";
const port = Number(process.env.BENCH_PORT ?? 3200);
const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const accessTokenType = process.env.BENCH_ACCESS_TOKEN_TYPE ?? "jwt";
const issuer = `http://127.0.0.1:${port}`;

if (!fs.existsSync(path.join(root, distDir, "BUILD_ID")) || process.env.BENCH_REBUILD === "1") {
  console.log(`Building the production app into ${distDir} ...`);
  execFileSync(process.execPath, ["node_modules/next/dist/bin/next", "build"], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, NEXT_DIST_DIR: distDir, NEXT_TELEMETRY_DISABLED: "1" },
  });
}
const serverFile = path.join(root, distDir, "server.mjs");
await build({
  entryPoints: [path.join(root, "server.ts")],
  outfile: serverFile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  logLevel: "warning",
});

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-bench-"));
const adminPat = "torii_pat_bench_" + randomBytes(24).toString("hex");
const server = spawn(process.execPath, [serverFile], {
  cwd: root,
  stdio: ["ignore", "ignore", "inherit"],
  env: {
    ...process.env,
    NODE_ENV: "production",
    NEXT_DIST_DIR: distDir,
    NEXT_TELEMETRY_DISABLED: "1",
    PORT: String(port),
    HOSTNAME: "127.0.0.1",
    IDP_ISSUER: issuer,
    IDP_DATA_DIR: dataDir,
    IDP_ADMIN_PAT: adminPat,
    IDP_LOG_LEVEL: "warn",
  },
});
let stopped = false;
function stop() {
  if (stopped) return;
  stopped = true;
  server.kill("SIGTERM");
  fs.rmSync(dataDir, { recursive: true, force: true });
}
process.on("SIGINT", () => (stop(), process.exit(130)));
server.on("exit", (code) => {
  if (!stopped) {
    console.error(`server exited early (code ${code})`);
    process.exit(1);
  }
});

try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(issuer + "/readyz")).ok) break;
    } catch {}
    if (i > 600) throw new Error("server did not become ready");
    await new Promise((r) => setTimeout(r, 100));
  }

  const created = await fetch(issuer + "/management/v1/clients", {
    method: "POST",
    headers: { authorization: `Bearer ${adminPat}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench", grantTypes: ["client_credentials"], authMethod: "client_secret_basic", accessTokenType }),
  });
  if (created.status !== 201) throw new Error(`creating the client failed: ${created.status} ${await created.text()}`);
  const { clientId, clientSecret } = await created.json();
  const enc = (v) => encodeURIComponent(v).replace(/%20/g, "+");
  const headers = {
    "content-type": "application/x-www-form-urlencoded",
    authorization: "Basic " + Buffer.from(`${enc(clientId)}:${enc(clientSecret)}`).toString("base64"),
  };
  const body = "grant_type=client_credentials&scope=openid";
  const probe = await fetch(issuer + "/oauth/v2/token", { method: "POST", headers, body });
  if (probe.status !== 200) throw new Error(`token request failed: ${probe.status} ${await probe.text()}`);

  // Warm-up (JIT, caches), then the measured run.
  await autocannon({ url: issuer + "/oauth/v2/token", method: "POST", headers, body, connections, duration: 2 });
  const result = await autocannon({ url: issuer + "/oauth/v2/token", method: "POST", headers, body, connections, duration });
  const errors = result.non2xx + result.errors + result.timeouts;
  console.log(
    [
      "",
      `client_credentials grant, ${accessTokenType} access tokens, ${connections} connections, ${duration} s, ${os.cpus().length} CPUs`,
      `  requests/s:  ${Math.round(result.requests.average)} (total ${result.requests.total})`,
      `  latency:     p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`,
      `  errors:      ${errors} (non-2xx ${result.non2xx}, socket ${result.errors}, timeouts ${result.timeouts})`,
      "",
    ].join("\n"),
  );
  stop();
  process.exit(errors ? 1 : 0);
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  stop();
  process.exit(1);
}
