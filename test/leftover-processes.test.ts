// scripts/test.mjs fails a run that leaves a process behind: it marks every runner's environment
// with TORII_TEST_RUN=<id> and, once the runner has exited, kills and reports whatever still
// carries that id (scripts/leftover-processes.mjs, run here as test.mjs runs it).
import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { alive } from "./process-support";

function check(id: string) {
  return spawnSync(process.execPath, ["scripts/leftover-processes.mjs", id], { encoding: "utf8", env: { ...process.env, LEFTOVER_GRACE_MS: "300" } });
}

describe("leftover processes of a test run", () => {
  it("a process that outlived its launcher (detached, other process group) is found, killed and fails the check", async () => {
    const id = randomUUID();
    // A launcher that starts a detached grandchild and exits at once, as a tsx launcher killed
    // with SIGKILL used to leave its server behind.
    const launcher = spawn(
      process.execPath,
      ["-e", `const c = require("node:child_process").spawn("sleep", ["60"], { detached: true, stdio: "ignore" }); console.log(c.pid); c.unref();`],
      { env: { ...process.env, TORII_TEST_RUN: id }, stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    launcher.stdout!.on("data", (d) => (out += d));
    await new Promise((r) => launcher.once("exit", r));
    const orphan = Number(out.trim());
    expect(alive(orphan)).toBe(true);

    const r = check(id);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`pid ${orphan}: sleep 60`);
    await expect.poll(() => alive(orphan)).toBe(false);
    expect(check(id).status).toBe(0);
  });

  it("a run whose processes all ended passes, and processes of other runs are not its concern", async () => {
    const other = spawn("sleep", ["60"], { env: { ...process.env, TORII_TEST_RUN: randomUUID() }, stdio: "ignore" });
    try {
      expect(check(randomUUID()).status).toBe(0);
      expect(alive(other.pid!)).toBe(true);
    } finally {
      other.kill("SIGKILL");
    }
  });
});
