import { systemClock } from "@/lib/clock";
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/lib/db/client";
import { resultRows } from "@/lib/db/client";
import { Caches } from "@/lib/store/caches";
import { rotateSigningKey } from "@/lib/keys/signing-keys";
import { createTestDatabase, TEST_DB } from "./harness";
import { freePort, killGroup, spawnTs } from "./process-support";

const children: ChildProcess[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  // The whole process group: a SIGKILL to a launcher would not reach the server it started.
  for (const c of children) killGroup(c);
  for (const c of cleanups) await c();
});

async function startProcess(env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-multi-"));
  cleanups.push(() => { fs.rmSync(dataDir, { recursive: true, force: true }); });
  const child = spawnTs("test/fixtures/instance-main.ts", { PATH: process.env.PATH, ...env, PORT: String(port), IDP_ISSUER: "http://localhost:9999", IDP_DATA_DIR: dataDir, IDP_LOG_LEVEL: "silent" });
  children.push(child);
  let err = "";
  child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
    });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      if (d.toString().includes("ready")) resolve();
    });
    child.on("exit", (code) => { reject(new Error(`instance exited with ${code}: ${err}`)); });
  });
  return `http://127.0.0.1:${port}`;
}

async function keys(base: string): Promise<string[]> {
  const res = await fetch(base + "/oauth/v2/keys");
  return ((await res.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid).sort();
}

describe.skipIf(TEST_DB !== "pg")("several instances on one PostgreSQL", () => {
  it("start together, bootstrap once, serve the same keys and see one rotation", { timeout: 90_000 }, async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const masterKey = "ab".repeat(32);
    const env = { DATABASE_URL: database.url, IDP_MASTER_KEY: masterKey, IDP_ADMIN_PAT: "torii_pat_" + "m".repeat(40) };
    const [a, b] = await Promise.all([startProcess(env), startProcess(env)]);

    const db = openDatabase({ databaseUrl: database.url, dataDir: os.tmpdir() });
    cleanups.unshift(() => db.close());
    const admins = resultRows<{ n: number }>(await db.db.execute(sql`SELECT count(*)::int AS n FROM users WHERE username = 'admin'`));
    expect(admins[0]!.n).toBe(1);

    const first = await keys(a);
    expect(first).toHaveLength(1);
    expect(await keys(b)).toEqual(first);

    // A rotation by any instance is seen by all within the key cache's few seconds.
    const scope = { db: db.db, database: db, caches: new Caches(systemClock), clock: systemClock, id: "test", masterKey: Buffer.from(masterKey, "hex") };
    const r = await rotateSigningKey(scope, { force: true, intervalSeconds: 86_400 });
    const deadline = Date.now() + 10_000;
    let seenA: string[] = [];
    let seenB: string[] = [];
    while (Date.now() < deadline) {
      [seenA, seenB] = await Promise.all([keys(a), keys(b)]);
      if (seenA.includes(r.kid) && seenB.includes(r.kid)) break;
      await new Promise((res) => setTimeout(res, 500));
    }
    expect(seenA).toContain(r.kid);
    expect(seenB).toEqual(seenA);
  });

  it("a second instance with another master key refuses to start", { timeout: 60_000 }, async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    await startProcess({ DATABASE_URL: database.url, IDP_MASTER_KEY: "ab".repeat(32) });
    await expect(startProcess({ DATABASE_URL: database.url, IDP_MASTER_KEY: "cd".repeat(32) })).rejects.toThrow(/IDP_MASTER_KEY does not match/);
  });
});
