import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { parseConfig, type Config } from "@/lib/config";
import { randomToken } from "@/lib/crypto";
import type { Clock } from "@/lib/clock";
import { createTorii, type Engine } from "@/lib/engine";
import { serverLimits, toriiRequestListener } from "@/lib/server/create-server";
import { applyServerLimits, CONNECTIONS_CHECKING_INTERVAL_MS, type ServerLimits } from "@/lib/server/limits";
import { PGLITE_IMAGE_ENV } from "./global-setup";
import { nextRoutesStandIn } from "./next-routes";

/**
 * Which database the suite runs against: embedded PGlite (default) or, with TORII_TEST_DB=pg,
 * a fresh database created on TEST_DATABASE_URL's server for each test file.
 */
export const TEST_DB: "pglite" | "pg" = process.env.TORII_TEST_DB === "pg" ? "pg" : "pglite";

export type TestInstance = {
  inst: Engine;
  baseUrl: string;
  issuer: string;
  adminPat: string;
  config: Config;
  /** fetch relative to the instance, with the admin PAT unless `auth: false`. */
  api(pathname: string, init?: RequestInit & { auth?: boolean; json?: unknown }): Promise<Response>;
  close(): Promise<void>;
};

export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error("TORII_TEST_DB=pg needs TEST_DATABASE_URL");
  const name = `torii_test_${Date.now()}_${randomToken(6).toLowerCase().replace(/[^a-z0-9]/g, "")}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = "/" + name;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * Starts a Torii instance on a random loopback port, serving every lib/ handler through the same
 * server entry that production uses (pages need the Next build and are covered by Playwright).
 */
export type TestOptions = {
  /** Serve the route handlers Next serves in production too (test/next-routes.ts). */
  nextRoutes?: boolean;
  /** Server timeouts and connection cap other than the production ones. */
  limits?: Partial<ServerLimits>;
  /** The engine's clock (test/fakes/fake-clock.ts moves time without sleeping); default the system's. */
  clock?: Clock;
};

export async function startTestInstance(env: Record<string, string> = {}, options: TestOptions = {}): Promise<TestInstance> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-test-"));
  const database = TEST_DB === "pg" ? await createTestDatabase() : undefined;
  const adminPat = "torii_pat_test_" + randomToken(32);

  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const listener = http.createServer({ connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS }, (req, res) => { handler(req, res); });
  await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
  const port = (listener.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;

  const config: Config = {
    ...parseConfig({
      IDP_ISSUER: baseUrl,
      IDP_DATA_DIR: dataDir,
      IDP_ADMIN_PAT: adminPat,
      IDP_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
      ...(database ? { DATABASE_URL: database.url } : {}),
      ...env,
    }),
    inMemory: !database,
    inMemoryImage: process.env[PGLITE_IMAGE_ENV],
  };
  const inst = await createTorii(config, { clock: options.clock });
  applyServerLimits(listener, { ...serverLimits(config), ...options.limits });
  handler = toriiRequestListener(inst, options.nextRoutes ? nextRoutesStandIn(inst, new URL(config.issuer).origin) : undefined);

  return {
    inst,
    baseUrl,
    issuer: config.issuer,
    adminPat,
    config,
    api(pathname, init = {}) {
      const headers = new Headers(init.headers);
      if (init.auth !== false && !headers.has("authorization")) headers.set("authorization", `Bearer ${adminPat}`);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set("content-type", "application/json");
        body = JSON.stringify(init.json);
      }
      return fetch(baseUrl + pathname, { ...init, headers, body });
    },
    async close() {
      const closed = new Promise<void>((r) => listener.close(() => { r(); }));
      // A response whose body the test never read can stay unfinished (the client stops reading,
      // the server's write waits), and close() would wait for that connection forever.
      listener.closeAllConnections();
      await closed;
      await inst.close();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
