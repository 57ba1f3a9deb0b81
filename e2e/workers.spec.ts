// IDP_WORKERS (README, "Several processes"): N worker processes share the port on PostgreSQL, a
// worker that dies is replaced, SIGTERM stops them all; PGlite refuses more than one. Here because
// it needs the production build that this suite's web server has just made.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { alive, exited, freePort, printed } from "../test/process-support";
import { onPostgresServer, POSTGRES_SERVER_URL } from "./support";

const serverUrl = POSTGRES_SERVER_URL;

function childrenOf(pid: number): number[] {
  try {
    return execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" }).split("\n").filter(Boolean).map(Number);
  } catch {
    return []; // ps exits 1 when there are none
  }
}

function serverEnv(port: number, dataDir: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: "production", PORT: String(port), HOSTNAME: "127.0.0.1", IDP_ISSUER: `http://127.0.0.1:${port}`, IDP_DATA_DIR: dataDir, IDP_LOG_LEVEL: "warn", ...extra };
  delete env.IDP_ADMIN_PAT;
  if (!extra.DATABASE_URL) delete env.DATABASE_URL;
  return env;
}

test("IDP_WORKERS=2 on PGlite is refused with a message that names DATABASE_URL", async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-workers-"));
  try {
    const child = spawn(process.execPath, ["dist/server.mjs"], { env: serverEnv(await freePort(), dataDir, { IDP_WORKERS: "2" }), stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    expect(await exited(child)).toEqual({ code: 1, signal: null });
    expect(stderr).toContain("Configuration error: IDP_WORKERS");
    expect(stderr).toContain("DATABASE_URL");
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test("IDP_WORKERS=2 on PostgreSQL: two workers serve one port, a dead worker is replaced, SIGTERM stops all with 0", async () => {
  test.skip(!serverUrl, "needs a PostgreSQL server (E2E_DATABASE_URL or TEST_DATABASE_URL)");
  test.setTimeout(180_000);
  const dbName = `torii_workers_${randomBytes(6).toString("hex")}`;
  await onPostgresServer(`CREATE DATABASE ${dbName}`);
  const u = new URL(serverUrl!);
  u.pathname = `/${dbName}`;
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-workers-"));
  const primary = spawn(process.execPath, ["dist/server.mjs"], { env: serverEnv(port, dataDir, { IDP_WORKERS: "2", DATABASE_URL: u.toString() }), stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  primary.stdout.on("data", (d: Buffer) => (output += d.toString()));
  try {
    const banner = printed(primary, "Workers:      2 processes", 150_000);
    await banner;
    // The primary migrated and closed its engine without an error (it once closed the database
    // under the maintenance sweep the engine had begun).
    expect(output).not.toContain('"level":50');
    const workers = childrenOf(primary.pid!);
    expect(workers).toHaveLength(2);

    // Separate connections: the primary hands each new connection to one of the workers.
    const discovery = async () => {
      const r = await fetch(`http://127.0.0.1:${port}/.well-known/openid-configuration`, { headers: { connection: "close" } });
      return r.status;
    };
    expect(await Promise.all(Array.from({ length: 20 }, discovery))).toEqual(Array(20).fill(200));

    process.kill(workers[0]!, "SIGKILL");
    await expect.poll(() => { const now = childrenOf(primary.pid!); return now.length === 2 && !now.includes(workers[0]!); }, { timeout: 60_000 }).toBe(true);
    await expect.poll(async () => (await Promise.all(Array.from({ length: 10 }, discovery))).every((s) => s === 200), { timeout: 60_000 }).toBe(true);

    const serving = childrenOf(primary.pid!);
    process.kill(primary.pid!, "SIGTERM");
    expect(await exited(primary)).toEqual({ code: 0, signal: null });
    await expect.poll(() => serving.filter(alive), { timeout: 10_000 }).toEqual([]);
  } finally {
    try {
      process.kill(-primary.pid!, "SIGKILL");
    } catch {
      // all gone, as they should be
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
    await onPostgresServer(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  }
});
