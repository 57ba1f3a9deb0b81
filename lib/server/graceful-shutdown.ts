import type http from "node:http";

export type ShutdownOptions = {
  /** Closes what the requests used (the database), after the last connection has closed. */
  closeResources: () => Promise<void>;
  /** How long requests in flight may take before their connections are cut. */
  drainMs: number;
};

/**
 * Stops `server` gracefully: no new connections, requests in flight run to their end, then
 * `closeResources`. Resolves once everything is closed; `drainMs` bounds the wait for requests, so
 * a stuck client cannot hold the process (a keep-alive connection is closed as soon as it is idle).
 */
export async function shutDownServer(server: http.Server, opts: ShutdownOptions): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => { resolve(); }));
  // server.close() waits for every connection to end. Idle keep-alive connections never would by
  // themselves; a connection whose response has just finished becomes idle, so sweep repeatedly.
  server.closeIdleConnections();
  const sweep = setInterval(() => { server.closeIdleConnections(); }, 50);
  const deadline = setTimeout(() => { server.closeAllConnections(); }, opts.drainMs);
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
  }
  await opts.closeResources();
}

/**
 * On SIGTERM or SIGINT: stop `server` gracefully within 10 s (up to 8 s for requests in flight,
 * then the resources close) and exit 0; exit 1 if closing fails or hangs. A second signal changes
 * nothing: Ctrl-C reaches both `npm start`'s launcher, which forwards it, and the server itself.
 */
export function stopOnSignals(server: http.Server, closeResources: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: Torii is stopping (finishing requests in flight).`);
    setTimeout(() => {
      console.error("Torii did not stop within 10 s; exiting.");
      process.exit(1);
    }, 10_000).unref();
    shutDownServer(server, { drainMs: 8_000, closeResources }).then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(`Torii could not stop cleanly: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
