/**
 * Production entry (`npm start`): one Node HTTP server. Back-channel endpoints are served by
 * their Web handlers directly; everything else goes to Next (DESIGN.md, "the hot path").
 */
import fs from "node:fs";
import path from "node:path";
import next from "next";
import { config, ConfigError } from "@/lib/config";
import { MasterKeyMismatchError } from "@/lib/bootstrap";
import { instance, stopInstance } from "@/lib/instance";
import { createToriiServer } from "@/lib/server/create-server";
import { stopOnSignals } from "@/lib/server/graceful-shutdown";

async function main() {
  let cfg;
  try {
    cfg = config();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }

  let inst;
  try {
    inst = await instance();
  } catch (err) {
    if (err instanceof MasterKeyMismatchError || (err instanceof Error && err.message.startsWith("Configuration error"))) {
      console.error(err.message);
      process.exit(1);
    }
    console.error(`Torii could not start: ${(err as Error).message}`);
    process.exit(1);
  }

  const app = next({ dev: false, dir: process.cwd(), hostname: cfg.hostname, port: cfg.port });
  await app.prepare();
  const handle = app.getRequestHandler();
  const server = createToriiServer(cfg, (req, res) => handle(req, res));
  server.keepAliveTimeout = 65_000;

  server.on("error", (err: NodeJS.ErrnoException) => {
    console.error(err.code === "EADDRINUSE" ? `Configuration error: PORT ${cfg.port} is already in use` : err.message);
    process.exit(1);
  });
  server.listen(cfg.port, cfg.hostname, () => {
    const lines = [
      "",
      `  Torii is running.`,
      `  Issuer:       ${cfg.issuer}`,
      `  Discovery:    ${cfg.issuer}/.well-known/openid-configuration`,
      `  Database:     ${inst.database.kind === "pg" ? "PostgreSQL (DATABASE_URL)" : `embedded PGlite in ${path.join(cfg.dataDir, "pgdata")}`}`,
    ];
    const pwFile = path.join(cfg.dataDir, "admin-password");
    const patFile = path.join(cfg.dataDir, "admin.pat");
    if (inst.bootstrap.created) {
      lines.push(
        "",
        "  First start: created the administrator.",
        `  Login name:   admin`,
        `  Password:     ${inst.bootstrap.adminPassword}   (shown once; also in ${pwFile})`,
        inst.bootstrap.adminPatGenerated
          ? `  Admin PAT:    in ${patFile}`
          : "  Admin PAT:    the value of IDP_ADMIN_PAT",
      );
    } else {
      lines.push(
        `  Admin login:  admin (password in ${fs.existsSync(pwFile) ? pwFile : "the file written on first start"})`,
        `  Admin PAT:    ${cfg.adminPat ? "IDP_ADMIN_PAT" : fs.existsSync(patFile) ? patFile : "the token created on first start"}`,
      );
    }
    console.log(lines.join("\n") + "\n");
  });

  // SIGTERM/SIGINT: stop accepting, finish requests in flight, close the database, exit 0.
  stopOnSignals(server, stopInstance);
}

void main();
