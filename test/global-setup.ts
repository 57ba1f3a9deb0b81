/**
 * Vitest's global setup: one image of a new PGlite data folder for the whole run. Every in-memory
 * database the suite opens (test/harness.ts) starts from it instead of running PGlite's initdb,
 * which in WebAssembly takes seconds each time; migrations and the bootstrap still run on every
 * database, as in production. The image is PGlite's own `dumpDataDir` of a database just created,
 * before anything is written to it, so a database started from it is the same as a new one.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** The variable that tells the test processes (forked after this ran) where the image is. */
export const PGLITE_IMAGE_ENV = "TORII_TEST_PGLITE_IMAGE";

export default async function setup(): Promise<() => void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-pglite-image-"));
  const file = path.join(dir, "pgdata.tar");
  const { PGlite } = await import("@electric-sql/pglite");
  const pg = await PGlite.create();
  const image = await pg.dumpDataDir("none");
  await pg.close();
  fs.writeFileSync(file, Buffer.from(await image.arrayBuffer()));
  process.env[PGLITE_IMAGE_ENV] = file;
  return () => {
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
