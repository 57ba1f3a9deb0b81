// `npm run dev`: Next's development server (hot reload of app/; no server.ts: every endpoint is
// served by its App Router route). The core (lib/) is compiled first into node_modules/@torii/core
// and loaded once by Node, as in production, so a change under lib/ needs a restart of
// `npm run dev` (docs/architecture.md, "One engine per process"). Telemetry stays off unless
// NEXT_TELEMETRY_DISABLED is set otherwise; it would try to reach the network.
import { spawn } from "node:child_process";
import { buildCore } from "./build-core.mjs";

await buildCore();

const child = spawn(process.execPath, ["node_modules/next/dist/bin/next", "dev", ...process.argv.slice(2)], {
  stdio: "inherit",
  env: { NEXT_TELEMETRY_DISABLED: "1", ...process.env },
});
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
