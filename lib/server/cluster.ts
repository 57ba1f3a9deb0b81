import cluster, { type Worker } from "node:cluster";

export type WorkerSupervisor = {
  /** Resolves once every worker is listening; rejects if one exits before it listened. */
  ready: Promise<void>;
};

/**
 * Runs in the primary process of `IDP_WORKERS=N`: forks N workers running this same script, which
 * share the listening port through Node's cluster module. The primary serves no requests and
 * holds no engine.
 *
 * - A worker that exits before it ever listened is a startup failure (port in use, database
 *   unreachable, configuration): the others are stopped and the primary exits with 1, instead of
 *   forking the same failure forever.
 * - A worker that dies after it listened is replaced (after a second, so a crash loop cannot
 *   spin the CPU); requests on its connections fail, the others are not affected.
 * - SIGTERM/SIGINT reach the primary (from `npm start` or the process manager): it passes SIGTERM
 *   to every worker, each finishes its requests in flight and closes its engine
 *   (`stopOnSignals`), and the primary exits 0 once all have exited (1 if one had to be killed
 *   after 12 s).
 */
export function superviseWorkers(count: number, log: (line: string) => void = console.log): WorkerSupervisor {
  let stopping = false;
  let exitCode = 0;
  const listened = new WeakSet<Worker>();
  // Our own list: cluster.workers may still hold a worker whose exit event is being emitted.
  const alive = new Set<Worker>();
  let resolveReady!: () => void;
  let rejectReady!: (err: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  let listening = 0;

  const fork = () => {
    const worker = cluster.fork();
    alive.add(worker);
    worker.once("listening", () => {
      listened.add(worker);
      if (++listening === count) resolveReady();
    });
    return worker;
  };

  cluster.on("exit", (worker, code, signal) => {
    alive.delete(worker);
    if (stopping) {
      if (alive.size === 0) process.exit(exitCode);
      return;
    }
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (!listened.has(worker)) {
      log(`Torii worker ${worker.process.pid} exited (${how}) before it could serve; stopping.`);
      rejectReady(new Error("a worker failed to start"));
      stopAll(1);
      return;
    }
    log(`Torii worker ${worker.process.pid} exited (${how}); starting another.`);
    setTimeout(() => {
      if (!stopping) fork();
    }, 1_000).unref();
  });

  const stopAll = (failureCode: number) => {
    if (stopping) return;
    stopping = true;
    exitCode = failureCode;
    if (alive.size === 0) process.exit(failureCode);
    for (const w of alive) w.process.kill("SIGTERM");
    setTimeout(() => {
      log("Torii workers did not stop within 12 s; killing them.");
      for (const w of alive) w.process.kill("SIGKILL");
      process.exit(1);
    }, 12_000).unref();
  };

  for (const sig of ["SIGTERM", "SIGINT"] as const) {
    process.on(sig, () => {
      if (!stopping) log(`${sig}: Torii is stopping its ${count} workers (finishing requests in flight).`);
      stopAll(0);
    });
  }

  for (let i = 0; i < count; i++) fork();
  return { ready };
}
