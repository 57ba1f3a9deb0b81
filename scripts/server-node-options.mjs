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
// on the command line would override NODE_OPTIONS).
export const SERVER_OLD_SPACE_MB = 384;

const OLD_SPACE_FLAG = /--max[-_]old[-_]space[-_]size\b/;

/** The arguments to put before `dist/server.mjs` on `node`'s command line. */
export function serverNodeArgs(env = process.env) {
  return OLD_SPACE_FLAG.test(env.NODE_OPTIONS ?? "") ? [] : [`--max-old-space-size=${SERVER_OLD_SPACE_MB}`];
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
