// `npm start` as an operator runs it: SIGTERM to the npm process stops npm, scripts/start.mjs and
// the server, answers the request in flight, and exits 0 (README, "Run it"). Here, because it needs
// the production build that this suite's web server has just made.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { alive, exited, freePort, printed, slowPost } from "../test/process-support";

function childrenOf(pid: number): number[] {
  try {
    return execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" }).split("\n").filter(Boolean).map(Number);
  } catch {
    return []; // ps exits 1 when there are none
  }
}

test("SIGTERM to npm start: the request in flight is answered, then npm, its launcher and the server exit 0", async () => {
  test.setTimeout(180_000);
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-npm-start-"));
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOSTNAME: "127.0.0.1", IDP_ISSUER: `http://127.0.0.1:${port}`, IDP_DATA_DIR: dataDir, IDP_LOG_LEVEL: "warn" };
  delete env.DATABASE_URL;
  delete env.IDP_ADMIN_PAT;
  delete env.UV_THREADPOOL_SIZE;
  const npm = spawn("npm", ["start"], { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  try {
    await printed(npm, "Torii is running.", 150_000);
    const launcher = childrenOf(npm.pid!);
    expect(launcher).toHaveLength(1); // npm runs scripts/start.mjs without a shell in between
    const server = childrenOf(launcher[0]!);
    expect(server).toHaveLength(1);
    // The server runs with V8's old generation bounded and its helper threads sized by the cores
    // (scripts/server-node-options.mjs), as ps shows.
    const v8Pool = Math.min(4, Math.max(1, os.availableParallelism() - 1));
    expect(fs.readFileSync(`/proc/${server[0]}/cmdline`, "utf8").split("\0")).toEqual([process.execPath, "--max-old-space-size=384", `--v8-pool-size=${v8Pool}`, "dist/server.mjs", ""]);
    // ...and with libuv's thread pool, where it signs tokens, sized by the machine's cores (at least 2).
    const environ = fs.readFileSync(`/proc/${server[0]}/environ`, "utf8").split("\0");
    expect(environ).toContain(`UV_THREADPOOL_SIZE=${Math.max(2, os.availableParallelism())}`);

    const inFlight = slowPost(`http://127.0.0.1:${port}/oauth/v2/token`, "grant_type=client_credentials&client_id=nobody&client_secret=wrong-secret-value");
    await inFlight.sentHalf;
    process.kill(npm.pid!, "SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    inFlight.finish();
    const res = await inFlight.response;
    expect(res.status).toBe(401);

    expect(await exited(npm)).toEqual({ code: 0, signal: null });
    await expect.poll(() => [launcher[0]!, server[0]!].filter(alive), { timeout: 10_000 }).toEqual([]);
  } finally {
    try {
      process.kill(-npm.pid!, "SIGKILL");
    } catch {
      // all gone, as they should be
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
