// Finds the processes a test run left behind. scripts/test.mjs gives every runner it starts the
// environment variable TORII_TEST_RUN=<a fresh id>; children inherit it (tests that start servers
// with an environment of their own pass it on), so any process still carrying it once a runner has
// exited outlived the run. Such a process holds ports, data folders or databases: it is reported,
// killed, and the run fails.
//   node scripts/leftover-processes.mjs <id>   exits 1 (after killing them) when there are any
import fs from "node:fs";
import { pathToFileURL } from "node:url";

export const MARKER = "TORII_TEST_RUN";

/** The processes (other than this one) whose environment has TORII_TEST_RUN=<id>: [{pid, cmd}]. */
export function processesOfRun(id) {
  const needle = `${MARKER}=${id}`;
  const found = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (/\) Z /.test(fs.readFileSync(`/proc/${entry}/stat`, "utf8"))) continue; // exited, not yet reaped
      if (!fs.readFileSync(`/proc/${entry}/environ`, "latin1").split("\0").includes(needle)) continue;
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, "latin1").split("\0").join(" ").trim();
      found.push({ pid: Number(entry), cmd });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/**
 * Waits up to `graceMs` for the run's processes to end by themselves (a server may still be
 * closing), then kills what is left. Returns what had to be killed.
 */
export async function reapLeftovers(id, graceMs = 5000) {
  const deadline = Date.now() + graceMs;
  let left = processesOfRun(id);
  while (left.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    left = processesOfRun(id);
  }
  for (const p of left) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // ended just now
    }
  }
  return left;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const id = process.argv[2];
  if (!id) {
    console.error("usage: node scripts/leftover-processes.mjs <run id>");
    process.exit(2);
  }
  const left = await reapLeftovers(id, Number(process.env.LEFTOVER_GRACE_MS ?? 5000));
  for (const p of left) console.error(`left behind by the test run (killed): pid ${p.pid}: ${p.cmd}`);
  process.exit(left.length ? 1 : 0);
}
