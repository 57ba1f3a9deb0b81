/**
 * Production entry (`npm start`): one Node HTTP server. Back-channel endpoints are served by
 * their Web handlers directly; everything else goes to Next (docs/architecture.md, "A token request").
 */
import cluster from "node:cluster";
import fs from "node:fs";
import path from "node:path";
import { loadConfig, ConfigError, type Config } from "@torii/core/config";
import { MasterKeyMismatchError } from "@torii/core/bootstrap";
import { createTorii } from "@torii/core/engine";
import { adoptEngine, closeTorii } from "@torii/core/runtime";
import { startupBanner } from "@torii/core/server/banner";
import { adoptBuiltNextConfig } from "@torii/core/server/built-next-config";
import { superviseWorkers } from "@torii/core/server/cluster";
import { createToriiServer } from "@torii/core/server/create-server";
import { routerStateScreen } from "@torii/core/server/request-screen";
import { stopOnSignals } from "@torii/core/server/graceful-shutdown";
import { switchOffIdleAsyncContexts } from "@torii/core/server/idle-async-context";

async function main() {
  let cfg;
  try {
    cfg = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }

  const inst = await startEngine(cfg);
  const banner = () =>
    startupBanner({
      issuer: cfg.issuer,
      database: inst.database.kind === "pg" ? "PostgreSQL (DATABASE_URL)" : `embedded PGlite in ${path.join(cfg.dataDir, "pgdata")}`,
      dataDir: cfg.dataDir,
      firstStart: inst.bootstrap.created,
      adminPatFromEnv: inst.bootstrap.created ? !inst.bootstrap.adminPatGenerated : !!cfg.adminPat,
      workers: cfg.workers,
      exists: (f) => fs.existsSync(f),
    });

  if (cfg.workers > 1 && cluster.isPrimary) {
    // IDP_WORKERS=N: this engine has migrated and bootstrapped the database (and created the
    // master key) once, so the workers never race to; the primary then only supervises.
    await inst.close();
    await superviseWorkers(cfg.workers).ready.then(
      () => { console.log(banner()); },
      () => { /* the supervisor reported the failing worker and is exiting */ },
    );
    return;
  }

  // Next's route modules import the same compiled core (node_modules/@torii/core), so they find
  // this engine through the runtime module instead of creating a second one.
  adoptEngine(inst);

  adoptBuiltNextConfig(process.cwd());
  // Before Next is loaded, so that its AsyncLocalStorage instances (and React's) can be switched
  // off while no page is in flight: they would keep Node's async hooks on for every request.
  const contexts = switchOffIdleAsyncContexts();
  // Imported here, not at the top: a primary that only supervises workers never loads Next.
  const { default: next } = await import("next");
  const app = next({ dev: false, dir: process.cwd(), hostname: cfg.hostname, port: cfg.port });
  await app.prepare();
  const handle = app.getRequestHandler();
  // Next's own parser of the router-state header, to refuse what it would answer with a 500.
  const routerState = await import("next/dist/server/app-render/parse-and-validate-flight-router-state.js");
  const server = createToriiServer(inst, contexts.serving((req, res) => handle(req, res)), routerStateScreen(routerState.parseAndValidateFlightRouterState));

  server.on("error", (err: NodeJS.ErrnoException) => {
    console.error(err.code === "EADDRINUSE" ? `Configuration error: PORT ${cfg.port} is already in use` : err.message);
    process.exit(1);
  });
  server.listen(cfg.port, cfg.hostname, () => {
    // A worker stays quiet: its primary prints the banner once every worker listens.
    if (cluster.isPrimary) console.log(banner());
  });

  // SIGTERM/SIGINT: stop accepting, finish requests in flight, close the database, exit 0.
  stopOnSignals(server, closeTorii);
}

async function startEngine(cfg: Config) {
  try {
    return await createTorii(cfg);
  } catch (err) {
    if (err instanceof MasterKeyMismatchError || (err instanceof Error && err.message.startsWith("Configuration error"))) {
      console.error(err.message);
      process.exit(1);
    }
    console.error(`Torii could not start: ${(err as Error).message}`);
    process.exit(1);
  }
}

void main();
