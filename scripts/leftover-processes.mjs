// Finds the processes a test run left behind. scripts/test.mjs gives every runner it starts the
// environment variable TORII_TEST_RUN=<a fresh id>; children inherit it (tests that start servers
// with an environment of their own pass it on), so any process still carrying it once a runner has
// exited outlived the run. A process started with a hand-made environment lacks the id; it is
// found all the same when it was orphaned (its parent, e.g. a launcher killed with SIGKILL, is gone
// and init adopted it), runs in this folder and started after the run did. Such a process holds
// ports, data folders or databases: it is reported, killed, and the run fails.
//   node scripts/leftover-processes.mjs <id> [<run start, clock ticks since boot>]
//   exits 1 (after killing them) when there are any
import fs from "node:fs";
import { pathToFileURL } from "node:url";

export const MARKER = "TORII_TEST_RUN";

/** Now, in the unit of /proc/<pid>/stat's start time: clock ticks (USER_HZ, 100 on Linux) since boot. */
export function ticksSinceBoot() {
  return Math.floor(Number(fs.readFileSync("/proc/uptime", "utf8").split(" ")[0]) * 100);
}

/**
 * The processes (other than this one) whose environment has TORII_TEST_RUN=<id>, or that are
 * orphans started in this folder since `since` (clock ticks since boot): [{pid, cmd}].
 */
export function processesOfRun(id, since = Infinity) {
  const needle = `${MARKER}=${id}`;
  const cwd = process.cwd();
  const found = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command name: state ppid pgrp session tty_nr tpgid flags minflt cminflt
      // majflt cmajflt utime stime cutime cstime priority nice num_threads itrealvalue starttime
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (f[0] === "Z") continue; // exited, not yet reaped
      const orphan = f[1] === "1" && Number(f[19]) >= since && fs.readlinkSync(`/proc/${entry}/cwd`) === cwd;
      if (!orphan && !fs.readFileSync(`/proc/${entry}/environ`, "latin1").split("\0").includes(needle)) continue;
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
export async function reapLeftovers(id, since = Infinity, graceMs = 5000) {
  const deadline = Date.now() + graceMs;
  let left = processesOfRun(id, since);
  while (left.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    left = processesOfRun(id, since);
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
  const since = process.argv[3] ? Number(process.argv[3]) : Infinity;
  const left = await reapLeftovers(id, since, Number(process.env.LEFTOVER_GRACE_MS ?? 5000));
  for (const p of left) console.error(`left behind by the test run (killed): pid ${p.pid}: ${p.cmd}`);
  process.exit(left.length ? 1 : 0);
}
