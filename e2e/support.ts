import pg from "pg";
import { E2E_BASE_URL } from "../playwright.config";

export const BASE_URL = E2E_BASE_URL;
/**
 * Screenshots for people to look at (not compared): under test-results/, which git ignores, so
 * that a test run never changes the working tree.
 */
export const SHOTS = "test-results/screenshots";
/**
 * Where scripts/e2e-server.mjs writes the URL of its PostgreSQL database (absent on PGlite), for
 * the few tests that must change what no API changes (a password's age).
 */
export const E2E_DATABASE_FILE = `test-results/e2e-database-${new URL(E2E_BASE_URL).port}.url`;
export const ADMIN_PAT = process.env.E2E_ADMIN_PAT ?? "torii_pat_e2e_0123456789abcdef0123456789abcdef";

/** Calls the management API as the bootstrap administrator. */
export async function adminApi(pathname: string, init: { method?: string; json?: unknown } = {}): Promise<Response> {
  return fetch(BASE_URL + "/management/v1" + pathname, {
    method: init.method ?? (init.json === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${ADMIN_PAT}`,
      ...(init.json === undefined ? {} : { "content-type": "application/json" }),
    },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
}

/** The PostgreSQL server on which the tests that start a Torii of their own make its database. */
export const POSTGRES_SERVER_URL = process.env.E2E_DATABASE_URL ?? process.env.TEST_DATABASE_URL;

/** Runs one statement on that server: a test's own database created or dropped. */
export async function onPostgresServer(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: POSTGRES_SERVER_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}
