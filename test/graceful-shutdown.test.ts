// SIGTERM stops a Torii process gracefully: it stops accepting connections, answers the request in
// flight, closes the database and exits 0 within 10 s (server.ts uses the same stopOnSignals).
// `npm start` as a whole (npm -> scripts/start.mjs -> dist/server.mjs) is checked by the browser
// suite, which has the production build: e2e/npm-start.spec.ts.
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { exited, freePort, killGroup, printed, slowPost, spawnTs } from "./process-support";
import type { ChildProcess } from "node:child_process";

let child: ChildProcess | undefined;
let dataDir: string | undefined;
afterEach(() => {
  if (child) killGroup(child);
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  child = dataDir = undefined;
});

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => { resolve(false); });
  });
}

describe("graceful shutdown", () => {
  it("SIGTERM: the request in flight is answered, new connections are refused, the database closes, exit 0", { timeout: 60_000 }, async () => {
    const port = await freePort();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-shutdown-"));
    child = spawnTs("test/fixtures/shutdown-main.ts", {
      PATH: process.env.PATH,
      PORT: String(port),
      IDP_ISSUER: `http://127.0.0.1:${port}`,
      IDP_DATA_DIR: dataDir,
      IDP_LOG_LEVEL: "silent",
    });
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
    });
    await printed(child, "ready");

    const inFlight = slowPost(`http://127.0.0.1:${port}/oauth/v2/token`, "grant_type=client_credentials&client_id=nobody&client_secret=wrong-secret-value");
    await inFlight.sentHalf;
    const started = Date.now();
    child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    expect(await connects(port)).toBe(false);
    expect(out).not.toContain("database closed"); // still waiting for the request
    inFlight.finish();

    const res = await inFlight.response;
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body).error).toBe("invalid_client");
    expect(await exited(child)).toEqual({ code: 0, signal: null });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(out).toContain("database closed");
  });

  it("SIGINT (Ctrl-C): a client that never finishes its request does not hold the process beyond 10 s", { timeout: 60_000 }, async () => {
    const port = await freePort();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-shutdown-"));
    child = spawnTs("test/fixtures/shutdown-main.ts", {
      PATH: process.env.PATH,
      PORT: String(port),
      IDP_ISSUER: `http://127.0.0.1:${port}`,
      IDP_DATA_DIR: dataDir,
      IDP_LOG_LEVEL: "silent",
    });
    await printed(child, "ready");
    const stuck = slowPost(`http://127.0.0.1:${port}/oauth/v2/token`, "grant_type=client_credentials&client_id=nobody");
    await stuck.sentHalf;
    stuck.response.catch(() => {}); // the server cuts it
    const started = Date.now();
    child.kill("SIGINT");
    expect(await exited(child)).toEqual({ code: 0, signal: null });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
