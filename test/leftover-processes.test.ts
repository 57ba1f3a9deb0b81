// scripts/test.mjs fails a run that leaves a process behind: it marks every runner's environment
// with TORII_TEST_RUN=<id> and, once the runner has exited, kills and reports whatever still
// carries that id (scripts/leftover-processes.mjs, run here as test.mjs runs it).
import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { alive } from "./process-support";

function check(id: string, since?: number) {
  const args = ["scripts/leftover-processes.mjs", id, ...(since === undefined ? [] : [String(since)])];
  return spawnSync(process.execPath, args, { encoding: "utf8", env: { ...process.env, LEFTOVER_GRACE_MS: "300" } });
}

/** Now in clock ticks since boot, as /proc/<pid>/stat counts a process's start. */
function ticks(): number {
  return Math.floor(Number(fs.readFileSync("/proc/uptime", "utf8").split(" ")[0]) * 100);
}

/**
 * A launcher that starts a detached grandchild and exits at once, as a tsx launcher killed with
 * SIGKILL used to leave its server behind. Resolves the orphan's pid.
 */
async function orphanSleep(env: Record<string, string | undefined>): Promise<number> {
  const launcher = spawn(
    process.execPath,
    ["-e", `const c = require("node:child_process").spawn("sleep", ["60"], { detached: true, stdio: "ignore" }); console.log(c.pid); c.unref();`],
    { env: env as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  launcher.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
  await new Promise((r) => launcher.once("exit", r));
  return Number(out.trim());
}

describe("leftover processes of a test run", () => {
  it("a process that outlived its launcher (detached, other process group) is found, killed and fails the check", async () => {
    const id = randomUUID();
    const orphan = await orphanSleep({ ...process.env, TORII_TEST_RUN: id });
    expect(alive(orphan)).toBe(true);

    const r = check(id);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`pid ${orphan}: sleep 60`);
    await expect.poll(() => alive(orphan)).toBe(false);
    expect(check(id).status).toBe(0);
  });

  it("an orphan started without the run's id (a hand-made environment) is found by its folder and start time", async () => {
    const since = ticks();
    const orphan = await orphanSleep({ PATH: process.env.PATH });
    await expect.poll(() => fs.readFileSync(`/proc/${orphan}/stat`, "utf8").split(") ")[1]!.split(" ")[1]).toBe("1"); // adopted by init
    expect(check(randomUUID()).status).toBe(0); // not by the id
    const r = check(randomUUID(), since);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`pid ${orphan}: sleep 60`);
    await expect.poll(() => alive(orphan)).toBe(false);
  });

  it("a run whose processes all ended passes, and processes of other runs are not its concern", () => {
    const other = spawn("sleep", ["60"], { env: { ...process.env, TORII_TEST_RUN: randomUUID() }, stdio: "ignore" });
    try {
      expect(check(randomUUID()).status).toBe(0);
      expect(alive(other.pid!)).toBe(true);
    } finally {
      other.kill("SIGKILL");
    }
  });
});
