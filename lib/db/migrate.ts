import path from "node:path";
import { readMigrationFiles } from "drizzle-orm/migrator";
import type { Database } from "./client";

/** Arbitrary constant shared by every Torii instance: the advisory lock that serialises migrations. */
const MIGRATION_LOCK = 72_690_001;

export function migrationsFolder(): string {
  return path.join(process.env.TORII_ROOT ?? process.cwd(), "db", "migrations");
}

/**
 * Applies the drizzle-kit migrations that are not yet recorded. Several instances may start at
 * once against one PostgreSQL: the transaction-scoped advisory lock lets one migrate while the
 * others wait, and they then find nothing left to do.
 */
export async function migrate(database: Database): Promise<{ applied: number }> {
  const migrations = readMigrationFiles({ migrationsFolder: migrationsFolder() });
  const s = await database.session();
  try {
    await s.exec("BEGIN");
    try {
      await s.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
      await s.exec(
        `CREATE TABLE IF NOT EXISTS torii_migrations (hash text PRIMARY KEY, created_at bigint NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const done = new Set((await s.query<{ hash: string }>("SELECT hash FROM torii_migrations")).map((r) => r.hash));
      let applied = 0;
      for (const m of migrations) {
        if (done.has(m.hash)) continue;
        for (const stmt of m.sql) if (stmt.trim()) await s.exec(stmt);
        await s.query("INSERT INTO torii_migrations (hash, created_at) VALUES ($1, $2)", [m.hash, m.folderMillis]);
        applied++;
      }
      await s.exec("COMMIT");
      return { applied };
    } catch (err) {
      await s.exec("ROLLBACK");
      throw err;
    }
  } finally {
    await s.release();
  }
}

export async function pendingMigrations(database: Database): Promise<number> {
  const migrations = readMigrationFiles({ migrationsFolder: migrationsFolder() });
  const s = await database.session();
  try {
    const exists = await s.query<{ t: string | null }>("SELECT to_regclass('torii_migrations')::text AS t");
    if (!exists[0]?.t) return migrations.length;
    const done = new Set((await s.query<{ hash: string }>("SELECT hash FROM torii_migrations")).map((r) => r.hash));
    return migrations.filter((m) => !done.has(m.hash)).length;
  } finally {
    await s.release();
  }
}
