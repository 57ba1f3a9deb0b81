import os from "node:os";

// The Node options and environment the production server runs with: `npm start`
// (scripts/start.mjs), the bench's Torii (bench/lib/targets.mjs), and through `npm start` the
// browser tests. IDP_WORKERS' worker processes inherit them (cluster forks with the primary's
// execArgv and environment).
//
// Why the old generation is bounded: under load V8 lets it grow far beyond what the server keeps
// alive, since it sizes each growth step from the heap's maximum (about 4 GB by default). On PGlite
// the heap swung between 60 and 230 MB under load while about 55 MB survived each collection, and
// resident memory with it (up to 506 MB). Bounded at 384 MB, resident memory stayed under 380 MB
// in the same runs, at the same throughput within this machine's noise. 256 MB kept it lower
// still (about 350) but made major collections frequent enough to show in refresh's p99 (33 to 55
// ms against 25 to 31). Nothing the server holds comes near the bound: request bodies are capped at
// 1 MB, management listings at 500 rows.
//
// An operator's own `--max-old-space-size` in NODE_OPTIONS wins: nothing is added then (a flag
// on the command line would override NODE_OPTIONS). The same holds for `--v8-pool-size` below.
export const SERVER_OLD_SPACE_MB = 384;

const OLD_SPACE_FLAG = /--max[-_]old[-_]space[-_]size\b/;
const V8_POOL_FLAG = /--v8[-_]pool[-_]size\b/;

/** The arguments to put before `dist/server.mjs` on `node`'s command line. */
export function serverNodeArgs(env = process.env, cores = os.availableParallelism()) {
  const options = env.NODE_OPTIONS ?? "";
  return [
    ...(OLD_SPACE_FLAG.test(options) ? [] : [`--max-old-space-size=${SERVER_OLD_SPACE_MB}`]),
    ...(V8_POOL_FLAG.test(options) ? [] : [`--v8-pool-size=${serverV8PoolSize(cores)}`]),
  ];
}

// Why V8's own threads (the helpers its garbage collector splits a collection's parallel phases
// across) are one fewer than the cores, at most Node's default of 4: a parallel phase ends when
// every helper has done its part, and a helper the kernel cannot schedule holds the main thread in
// the pause. On a 2-core machine, with the server's thread, PGlite's thread and the signing pool
// already filling both cores, Node's four helpers made the pauses longer: in alternating bench runs
// on PGlite one helper against four lowered p99 in 12 of 13 pairs (refresh 39 -> 31 ms on average
// over 8 pairs, the code flow 35 -> 26 over 5) at the same CPU time per operation; on PostgreSQL
// it changed neither. From 5 cores on this is Node's default. An operator's own --v8-pool-size in
// NODE_OPTIONS wins.
export function serverV8PoolSize(cores = os.availableParallelism()) {
  return Math.min(4, Math.max(1, cores - 1));
}

// Why the thread pool has one thread per core (at least 2) rather than libuv's 4: RS256 signatures
// run there (lib/keys/jws.ts), and on this 2-core machine four signing threads competed for the
// cores with the server's own thread, the database and the load generator. In four alternating
// pairs of bench runs on PostgreSQL, 2 threads against 4 gave client credentials with a JWT 6 to
// 14 % more ops/s in every pair, refresh and the code flow 6 % more on average (one pair of each
// slightly fewer), and a lower p99. On a machine with more cores the pool grows with them, so
// signatures can use every core. An operator's own UV_THREADPOOL_SIZE wins.
export function serverThreadPoolSize(cores = os.availableParallelism()) {
  return Math.min(1024, Math.max(2, cores));
}

/** The environment to start `dist/server.mjs` with: `env`, plus what the server needs from it. */
export function serverEnv(env = process.env, cores = os.availableParallelism()) {
  return env.UV_THREADPOOL_SIZE ? { ...env } : { ...env, UV_THREADPOOL_SIZE: String(serverThreadPoolSize(cores)) };
}
