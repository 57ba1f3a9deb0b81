// Every process the bench starts, and the one place that stops them: at the end, on Ctrl-C, on
// SIGTERM and on an error. Temporary folders and PostgreSQL databases are cleaned up there too.
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";

const children = new Set();
// USER_HZ: 100 on every Linux architecture Node runs on (getconf CLK_TCK).
const CLOCK_TICKS = 100;
const cleanups = [];
let stopping;

/**
 * Starts `node <args>`; resolves once `ready(line)` accepts a stdout line (or `readyUrl` answers
 * 200). `port`, the one the server will listen on, must be free first.
 */
export async function startNode(name, args, { env, cwd, port, readyLine, readyUrl, timeoutMs = 120_000 }) {
  if (port !== undefined) await assertPortFree(port, name);
  const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  const stderr = [];
  child.stderr.on("data", (d) => {
    stderr.push(String(d));
    if (stderr.length > 50) stderr.shift();
  });
  let ready = false;
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => (children.delete(child), resolve({ code, signal }))));
  const lineReady = new Promise((resolve) => {
    let buf = "";
    child.stdout.on("data", (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (readyLine && !ready && line.startsWith(readyLine)) resolve(line);
      }
      if (buf.length > 1e6) buf = "";
    });
  });
  const urlReady = readyUrl
    ? (async () => {
        for (;;) {
          try {
            if ((await fetch(readyUrl)).ok) return;
          } catch {}
          await new Promise((r) => setTimeout(r, 100));
        }
      })()
    : null;
  let timer;
  const result = await Promise.race([
    readyLine ? lineReady : urlReady,
    exited.then(({ code, signal }) => {
      throw new Error(`${name} exited before it was ready (code ${code}, signal ${signal}):\n${stderr.join("").slice(-3000)}`);
    }),
    new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${name} was not ready after ${timeoutMs / 1000} s`)), timeoutMs))),
  ]).finally(() => clearTimeout(timer));
  ready = true;
  return {
    name,
    pid: child.pid,
    readyLine: typeof result === "string" ? result : undefined,
    /** Resident memory in MB, from /proc (Linux), or null elsewhere. */
    rssMb() {
      // The process and its descendants (IDP_WORKERS: the primary and its workers).
      const kb = [child.pid, ...descendants(child.pid)].map((pid) => {
        try {
          const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
          return m ? Number(m[1]) : null;
        } catch {
          return null;
        }
      });
      return kb[0] == null ? null : Math.round(kb.reduce((a, x) => a + (x ?? 0), 0) / 1024);
    },
    /** CPU time the process and its workers have used, by process (cpuByProcess; cpuMsBetween subtracts two). */
    cpu: () => cpuByProcess(child.pid),
    stop: () => stopChild(child, exited),
    stderrTail: () => stderr.join(""),
  };
}

/**
 * The CPU time (user + system, all threads) of `pid` and of each of its live descendants, in ms,
 * by process id, from /proc (Linux); null when `pid` cannot be read (elsewhere, or another
 * machine's process). Per operation it is a figure a busy shared machine distorts much less than
 * req/s: waiting for a core costs latency, not CPU time.
 */
export function cpuByProcess(pid) {
  const each = new Map();
  for (const p of [pid, ...descendants(pid)]) {
    const f = statFields(p);
    if (f) each.set(p, ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS);
    else if (p === pid) return null;
  }
  return each;
}

/**
 * The CPU time used between two `cpuByProcess` readings: what each process used since the first,
 * all of it for a process that started since (or whose id was reused: its time went down). A
 * process that exited in between is left out, rather than taking the time it had before off the
 * sum (a pool's idle connections close on their own).
 */
export function cpuMsBetween(before, after) {
  let ms = 0;
  for (const [pid, now] of after) {
    const then = before.get(pid);
    ms += then === undefined || now < then ? now : now - then;
  }
  return ms;
}

/** The parent of `pid` (Linux /proc), or null when it cannot be read. */
export function parentPid(pid) {
  const f = statFields(pid);
  return f ? Number(f[1]) : null;
}

/**
 * The fields of /proc/<pid>/stat after the command name (f[0] is the state, f[1] the parent,
 * f[11] and f[12] user and system time in clock ticks), or null when it cannot be read. The name
 * is in parentheses and may hold spaces, so the fields start after the last ")".
 */
function statFields(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

async function stopChild(child, exited) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const killed = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(killed);
}

/**
 * Refuses a port something already listens on (a server left from another run, a second bench):
 * its answers would be taken for the new server's, which could not listen there.
 */
export function assertPortFree(port, name = "a server") {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", (err) => {
      reject(err.code === "EADDRINUSE" ? new Error(`port ${port}, for ${name}, is in use: is another bench or server running there? (--port=N uses N to N+4 and N+10 up)`) : err);
    });
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve()));
  });
}

/** Every process below `pid` (Linux /proc; none elsewhere). */
function descendants(pid) {
  let parents;
  try {
    parents = fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map((d) => [Number(d), parentPid(Number(d)) ?? -1]);
  } catch {
    return [];
  }
  const out = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift();
    for (const [c, pp] of parents) if (pp === p) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

/** Registers something to undo at the end (a folder, a database). Runs in reverse order. */
export function onCleanup(fn) {
  cleanups.push(fn);
}

/** True once stopping has begun (a signal or the end): errors of requests cut short are expected then. */
export function isStopping() {
  return stopping !== undefined;
}

export function stopAll() {
  stopping ??= (async () => {
    await Promise.all([...children].map((c) => stopChild(c, new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once("exit", r))))));
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        console.error(`cleanup failed: ${err.message}`);
      }
    }
  })();
  return stopping;
}

for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    console.error(`\n${sig}: stopping every process the bench started...`);
    stopAll().finally(() => process.exit(130));
  });
}
// Last resort if the harness exits without stopAll(): no orphan servers.
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});
