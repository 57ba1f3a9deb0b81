// `npm start`: build when the build is missing or older than the sources, then serve.
// package.json runs this with `exec`, so npm's SIGTERM/SIGINT reach this process (a shell in
// between would die and leave it running); it passes them on to the server and exits with it.
import { execFileSync, spawn } from "node:child_process";
import { buildIsStale } from "./build-state.mjs";
import { serverEnv, serverNodeArgs } from "./server-node-options.mjs";

if (buildIsStale()) {
  console.log("Building Torii (first start, or sources changed)...");
  execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" });
}
// No --enable-source-maps by default: it slows every stack trace; NODE_OPTIONS=--enable-source-maps
// turns it on (dist/server.mjs.map is built alongside).
const child = spawn(process.execPath, [...serverNodeArgs(), "dist/server.mjs"], {
  stdio: "inherit",
  env: serverEnv({ NEXT_TELEMETRY_DISABLED: "1", ...process.env, NODE_ENV: "production" }),
});
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
