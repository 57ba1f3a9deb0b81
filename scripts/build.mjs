// `npm run build`: the core package (scripts/build-core.mjs), the Next production build, then
// server.ts compiled to dist/server.mjs. The core stays outside both bundles: server.ts and the
// route modules import it from node_modules/@torii/core, so the process loads it once.
import { execFileSync } from "node:child_process";
import { build } from "esbuild";
import { buildCore } from "./build-core.mjs";

await buildCore();

// Telemetry would try to reach the network, which air-gapped deployments (and CI here) do not have.
execFileSync(process.execPath, ["node_modules/next/dist/bin/next", "build"], {
  stdio: "inherit",
  env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
});
await build({
  entryPoints: ["server.ts"],
  outfile: "dist/server.mjs",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  sourcemap: true,
  logLevel: "warning",
});
console.log("Built dist/server.mjs");
