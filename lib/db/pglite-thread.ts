import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

/**
 * PGlite's database engine on a thread of its own, reached by PostgreSQL wire-protocol messages.
 *
 * PGlite is PostgreSQL compiled to WebAssembly and runs on the thread that calls it: on the
 * server's one JavaScript thread, every statement's parse, plan, execution and commit would stop
 * every request in flight (about two fifths of a token refresh's CPU). On a thread of its own it
 * runs while the server's thread verifies, signs and answers other requests, on another core.
 *
 * The boundary is the wire protocol itself: the server's thread builds the messages and reads the
 * answers (pglite-statements.ts, pglite-client.ts), the database thread only runs them. One
 * message crosses each way per exchange, its bytes moved, not copied.
 */
export interface PgliteThread {
  /** Resolves when the database is open; rejects with the reason it could not be opened. */
  readonly ready: Promise<void>;
  /**
   * Runs the wire-protocol `message` and resolves with everything the server wrote back. Rejects
   * only when the exchange itself failed (the thread stopped, PGlite threw), never for an SQL
   * error: that is an ErrorResponse in the answer. `message` is moved to the thread: it must not
   * be used after the call.
   */
  exchange(message: Uint8Array, syncToFs: boolean): Promise<Buffer>;
  /**
   * Runs `statements` (each a Bind and an Execute, without Sync) in one exchange with one Sync:
   * one implicit transaction, so one commit. Resolves with each statement's answer, in order. If
   * any of them failed, none was kept, and each ran again alone (with a Sync of its own), so each
   * answer is what that statement alone would have answered, an error included. Groups sent while
   * the thread is busy are merged into its next exchange: the server's thread sends a group and
   * goes on without waiting for the previous one. Moves the statements, as `exchange` does.
   */
  group(statements: Uint8Array[]): Promise<Buffer[]>;
  /** Closes the database (PostgreSQL shuts down cleanly) and stops the thread. */
  close(): Promise<void>;
}

// The thread's code: a script of its own, since a worker needs code it can load by itself and the
// core is compiled into one package. It runs what it is sent, in the order it came; a statement
// group that finds other groups waiting behind it takes them along (see `group`).
const THREAD_SOURCE = `
const { parentPort, workerData, receiveMessageOnPort } = require("node:worker_threads");
const SYNC = Uint8Array.of(0x53, 0, 0, 0, 4);
const MAX_MERGED = 256;
let pg;
const opened = import(workerData.pglite).then(async ({ PGlite }) => {
  // Options only (the data folder one of them): PGlite ignores the second argument when the
  // first is not a folder's name, and an in-memory database would lose the configuration.
  const options = { dataDir: workerData.dir, postgresqlconf: workerData.conf };
  if (workerData.image) options.loadDataDir = new Blob([require("node:fs").readFileSync(workerData.image)]);
  pg = new PGlite(options);
  await pg.waitReady;
});
opened.then(() => parentPort.postMessage({ ready: true }), (err) => parentPort.postMessage({ failed: String((err && err.message) || err) }));

const queue = [];
let running = false;
parentPort.on("message", (m) => {
  queue.push(m);
  if (!running) void work();
});

async function work() {
  running = true;
  try {
    await opened.catch(() => {});
    while (queue.length) {
      // Whatever the server's thread sent meanwhile, so that waiting groups can be merged.
      for (let r; (r = receiveMessageOnPort(parentPort)); ) queue.push(r.message);
      const m = queue.shift();
      if (m.close) return await close(m);
      if (!m.statements) { await answer(m, () => exchange(m.message, m.syncToFs)); continue; }
      const groups = [m];
      let count = m.statements.length;
      while (queue.length && queue[0].statements && count + queue[0].statements.length <= MAX_MERGED) {
        count += queue[0].statements.length;
        groups.push(queue.shift());
      }
      await runGroups(groups);
    }
  } finally {
    running = false;
  }
}

async function answer(m, fn) {
  try {
    await opened;
    const out = await fn();
    parentPort.postMessage({ id: m.id, out }, [out.buffer]);
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: String((err && err.message) || err) });
  }
}

async function exchange(message, syncToFs) {
  const chunks = [];
  // Each chunk is a view of PGlite's memory, reused after the callback: copied.
  await pg.execProtocolRawStream(message, { syncToFs, onRawData: (bytes) => void chunks.push(bytes.slice()) });
  return chunks.length === 1 ? chunks[0] : concat(chunks);
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

// Where each statement's answer ends (after its CommandComplete or EmptyQueryResponse), or null
// if PostgreSQL answered with an error (ErrorResponse).
function answerEnds(out) {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const ends = [];
  for (let at = 0; at + 5 <= out.length; ) {
    const type = out[at];
    const end = at + 1 + view.getInt32(at + 1);
    if (type === 0x45) return null;
    if (type === 0x43 || type === 0x49) ends.push(end);
    at = end;
  }
  return ends;
}

// The statements of every group in one exchange (one implicit transaction, one commit), each
// statement's answer sent to its group; if any failed, none was kept, and each runs again alone
// in the same order, so each gets the answer or error it would have had alone.
async function runGroups(groups) {
  const all = groups.flatMap((g) => g.statements);
  try {
    await opened;
    let outs;
    if (all.length > 1) {
      const out = await exchange(concat([...all, SYNC]), true);
      const ends = answerEnds(out);
      if (ends) outs = all.map((_, i) => (i < ends.length ? out.slice(i ? ends[i - 1] : 0, ends[i]) : new Uint8Array(0)));
    }
    if (!outs) {
      outs = [];
      for (const s of all) outs.push(await exchange(concat([s, SYNC]), true));
    }
    let i = 0;
    for (const g of groups) {
      const mine = outs.slice(i, (i += g.statements.length));
      parentPort.postMessage({ id: g.id, outs: mine }, mine.map((o) => o.buffer));
    }
  } catch (err) {
    for (const g of groups) parentPort.postMessage({ id: g.id, error: String((err && err.message) || err) });
  }
}

async function close(m) {
  try { await opened; await pg.close(); } catch {}
  parentPort.postMessage({ id: m.id, closed: true });
  parentPort.close();
}
`;

type Reply = { ready?: true; failed?: string; id?: number; out?: Uint8Array; outs?: Uint8Array[]; error?: string; closed?: true };
type Pending = { resolve: (reply: Reply) => void; reject: (err: Error) => void };

/** The buffers of `parts` that can be moved to the thread: those each part has to itself. */
function movable(parts: Uint8Array[]): ArrayBuffer[] {
  return parts.flatMap((p) => (p.buffer instanceof ArrayBuffer && p.byteOffset === 0 && p.byteLength === p.buffer.byteLength ? [p.buffer] : []));
}

function bufferOf(bytes: Uint8Array | undefined): Buffer {
  return bytes ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : Buffer.alloc(0);
}

/**
 * Starts PGlite on a new thread, on the data folder `dir`, or in memory without one. In memory,
 * `image` (a tar of a new data folder, PGlite's `dumpDataDir`) is where it starts from instead of
 * running initdb, which in WebAssembly takes seconds: the test suite opens about a hundred databases
 * and makes one image for all of them (test/global-setup.ts).
 */
export function startPgliteThread(dir: string | undefined, conf: readonly string[], image?: string): PgliteThread {
  const pglite = pathToFileURL(createRequire(import.meta.url).resolve("@electric-sql/pglite")).href;
  const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: { pglite, dir, conf: [...conf], image: dir === undefined ? image : undefined } });
  const pending = new Map<number, Pending>();
  let next = 0;
  /** Why no exchange can run any more, once the thread has stopped or was closed. */
  let stopped: Error | undefined;
  let closing: Promise<void> | undefined;

  // The thread keeps the process alive only while something waits for it, as PGlite on the
  // server's thread does: an idle database does not hold a process that has nothing else to do.
  const hold = () => {
    if (pending.size === 1) worker.ref();
  };
  const release = () => {
    if (pending.size === 0) worker.unref();
  };

  let opened!: { resolve: () => void; reject: (err: Error) => void };
  const ready = new Promise<void>((resolve, reject) => (opened = { resolve, reject }));
  // A failure to open is also reported to whoever calls exchange(); nobody has to await `ready`.
  ready.catch(() => {});

  const stop = (reason: Error) => {
    stopped ??= reason;
    opened.reject(stopped);
    for (const p of pending.values()) p.reject(stopped);
    pending.clear();
  };

  worker.on("message", (reply: Reply) => {
    if (reply.ready) {
      release();
      opened.resolve();
      return;
    }
    if (reply.failed !== undefined) {
      stop(new Error(`could not open the embedded database: ${reply.failed}`));
      void worker.terminate();
      return;
    }
    const p = pending.get(reply.id!);
    if (!p) return;
    pending.delete(reply.id!);
    release();
    if (reply.error !== undefined) p.reject(new Error(`the embedded database failed: ${reply.error}`));
    else p.resolve(reply);
  });
  worker.on("error", (err) => {
    stop(new Error(`the embedded database stopped: ${err.message}`));
  });
  worker.on("exit", (code) => {
    stop(new Error(`the embedded database stopped (exit code ${code})`));
  });

  const send = (message: Record<string, unknown>, transfer: ArrayBuffer[] = []): Promise<Reply> => {
    if (stopped) return Promise.reject(stopped);
    const id = ++next;
    return new Promise<Reply>((resolve, reject) => {
      pending.set(id, { resolve, reject });
      hold();
      worker.postMessage({ ...message, id }, transfer);
    });
  };

  return {
    ready,
    async exchange(message, syncToFs) {
      return bufferOf((await send({ message, syncToFs }, movable([message]))).out);
    },
    async group(statements) {
      const { outs = [] } = await send({ statements }, movable(statements));
      return statements.map((_, i) => bufferOf(outs[i]));
    },
    close() {
      closing ??= (async () => {
        await send({ close: true }).catch(() => {});
        stopped ??= new Error("the embedded database is closed");
        await worker.terminate();
      })();
      return closing;
    },
  };
}
