// `npm start`: build when the build is missing or older than the sources, then serve.
import { execFileSync, spawn } from "node:child_process";
import { buildIsStale } from "./build-state.mjs";

if (buildIsStale()) {
  console.log("Building Torii (first start, or sources changed)...");
  execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" });
}
const child = spawn(process.execPath, ["--enable-source-maps", "dist/server.mjs"], {
  stdio: "inherit",
  env: { NEXT_TELEMETRY_DISABLED: "1", ...process.env, NODE_ENV: "production" },
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
