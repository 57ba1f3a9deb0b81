// `npm run build`: the Next production build, then server.ts compiled to dist/server.mjs.
import { execFileSync } from "node:child_process";
import { build } from "esbuild";

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
