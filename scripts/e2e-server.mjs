// Starts the production server for the browser tests on a fresh, throw-away data folder, and on
// embedded PGlite, or on a fresh PostgreSQL database when E2E_DATABASE_URL names a server
// (npm test runs the browser tests on both).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import pg from "pg";

const port = process.env.E2E_PORT ?? "3100";
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-e2e-"));
// Known to the tests (e2e/support.ts) so that they can set up clients and users through the API.
const adminPat = process.env.E2E_ADMIN_PAT ?? "torii_pat_e2e_0123456789abcdef0123456789abcdef";

const server = process.env.E2E_DATABASE_URL;
const dbName = server ? `torii_e2e_${Date.now()}_${randomBytes(4).toString("hex")}` : undefined;
async function onServer(sql) {
  const c = new pg.Client({ connectionString: server });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}
let databaseUrl;
// Read by the tests that must change what no API changes (e2e/support.ts E2E_DATABASE_FILE).
const databaseFile = `test-results/e2e-database-${port}.url`;
fs.rmSync(databaseFile, { force: true });
if (server) {
  await onServer(`CREATE DATABASE ${dbName}`);
  const u = new URL(server);
  u.pathname = "/" + dbName;
  databaseUrl = u.toString();
  fs.mkdirSync(path.dirname(databaseFile), { recursive: true });
  fs.writeFileSync(databaseFile, databaseUrl);
}

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
    // A missing text shows as ⟦key⟧ (app/_server/i18n-request.ts), which e2e/messages.spec.ts looks for.
    TORII_MARK_MISSING_MESSAGES: "1",
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  },
});
const stop = (sig) => {
  child.kill(sig);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
child.on("exit", async (code) => {
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(databaseFile, { force: true });
  if (dbName) await onServer(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
  process.exit(code ?? 0);
});
