// `npm run dev`: Next's development server (hot reload; no server.ts: every endpoint is served by
// its App Router route). Telemetry stays off unless NEXT_TELEMETRY_DISABLED is set otherwise; it
// would try to reach the network.
import { spawn } from "node:child_process";

const child = spawn(process.execPath, ["node_modules/next/dist/bin/next", "dev", ...process.argv.slice(2)], {
  stdio: "inherit",
  env: { NEXT_TELEMETRY_DISABLED: "1", ...process.env },
});
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
