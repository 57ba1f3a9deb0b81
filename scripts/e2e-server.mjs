// Starts the production server for the browser tests on a fresh, throw-away data folder.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn } from "node:child_process";

const port = process.env.E2E_PORT ?? "3100";
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-e2e-"));
// Known to the tests (e2e/support.ts) so that they can set up clients and users through the API.
const adminPat = process.env.E2E_ADMIN_PAT ?? "torii_pat_e2e_0123456789abcdef0123456789abcdef";
const child = spawn(process.execPath, ["scripts/start.mjs"], {
  stdio: "inherit",
  env: {
    ...process.env,
    PORT: port,
    HOSTNAME: "127.0.0.1",
    IDP_ISSUER: `http://localhost:${port}`,
    IDP_DATA_DIR: dataDir,
    IDP_ADMIN_PAT: adminPat,
    IDP_LOG_LEVEL: process.env.IDP_LOG_LEVEL ?? "warn",
  },
});
const stop = (sig) => {
  child.kill(sig);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
child.on("exit", (code) => {
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(code ?? 0);
});
