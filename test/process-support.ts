import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";

/** A port that was free a moment ago (the OS picks it; the caller binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => { resolve(port); });
    });
  });
}

/**
 * Runs a TypeScript entry in one Node process (tsx as a loader, not its launcher, which would put
 * a second process in between that a SIGKILL does not reach), in its own process group so that
 * `killGroup` ends it and anything it started.
 */
export function spawnTs(entry: string, env: Record<string, string | undefined>): ChildProcess {
  // The test run's marker goes along even in a clean environment, so that scripts/test.mjs can
  // tell whether the process outlived the run (scripts/leftover-processes.mjs).
  const marker = process.env.TORII_TEST_RUN ? { TORII_TEST_RUN: process.env.TORII_TEST_RUN } : {};
  return spawn(process.execPath, ["--import", "tsx", entry], { env: { ...env, ...marker } as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
}

export function killGroup(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL"): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once("exit", (code, signal) => { resolve({ code, signal }); }));
}

/** Resolves when the child prints `text` on stdout; rejects if it exits first. */
export function printed(child: ChildProcess, text: string, timeoutMs = 60_000): Promise<void> {
  let out = "";
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
    });
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => { reject(new Error(`no "${text}" within ${timeoutMs} ms: ${out} ${err}`)); }, timeoutMs);
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes(text)) {
        clearTimeout(t);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(t);
      reject(new Error(`exited with ${String(code)} before "${text}": ${out} ${err}`));
    });
  });
}

/**
 * Starts a POST whose body arrives in two parts: the request is in flight until `finish` sends
 * the rest. Resolves `response` with the status and body the server answered.
 */
export function slowPost(url: string, body: string): { sentHalf: Promise<void>; finish: () => void; response: Promise<{ status: number; body: string }> } {
  const u = new URL(url);
  let sentHalfResolve!: () => void;
  const sentHalf = new Promise<void>((r) => (sentHalfResolve = r));
  const half = Math.floor(body.length / 2);
  const req = http.request({
    host: u.hostname,
    port: u.port,
    path: u.pathname,
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "content-length": Buffer.byteLength(body) },
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on("response", (res) => {
      let b = "";
      res.on("data", (d: Buffer) => {
      b += d.toString();
    });
      res.on("end", () => { resolve({ status: res.statusCode!, body: b }); });
    });
    req.on("error", reject);
  });
  req.flushHeaders();
  req.write(body.slice(0, half), () => { sentHalfResolve(); });
  return { sentHalf, finish: () => req.end(body.slice(half)), response };
}

/** Whether the process `pid` still exists (a zombie counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
