// Closing an engine waits for the maintenance sweep it began when it opened (lib/engine.ts): the
// primary of IDP_WORKERS closes its engine right after migrating, and closing the database under
// the sweep made every such start log "maintenance failed".
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { exited, killGroup, spawnTs } from "./process-support";
import { createTestDatabase, TEST_DB } from "./harness";
import type { ChildProcess } from "node:child_process";

let child: ChildProcess | undefined;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  if (child) killGroup(child);
  child = undefined;
  for (const c of cleanups.splice(0)) await c();
});

it("an engine closed right after it opened logs no failed maintenance and exits 0", { timeout: 60_000 }, async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-open-close-"));
  cleanups.push(() => { fs.rmSync(dataDir, { recursive: true, force: true }); });
  // Each run opens a fresh instance (migrations, bootstrap, first key) and closes it at once.
  for (let run = 0; run < 2; run++) {
    const database = TEST_DB === "pg" ? await createTestDatabase() : undefined;
    if (database) cleanups.push(() => database.drop());
    child = spawnTs("test/fixtures/open-close-main.ts", {
      PATH: process.env.PATH,
      IDP_ISSUER: "http://127.0.0.1:3999",
      IDP_DATA_DIR: path.join(dataDir, String(run)),
      IDP_LOG_LEVEL: "info",
      ...(database ? { DATABASE_URL: database.url } : {}),
    });
    let out = "";
    child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    expect(await exited(child)).toEqual({ code: 0, signal: null });
    expect(out).toContain("closed");
    expect(out).not.toContain("maintenance failed");
    expect(out).not.toContain('"level":50');
  }
});
