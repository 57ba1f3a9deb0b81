import type { Database } from "./client";

/**
 * PostgreSQL's autovacuum, for the embedded database. PGlite is PostgreSQL in single-user mode:
 * there is no postmaster, so the autovacuum launcher never starts (even though `SHOW autovacuum`
 * says `on`), and nothing ever vacuums, analyses or freezes a table unless Torii does. Without
 * it, the space of deleted and rotated rows is never reclaimed, the planner never gets
 * statistics, and, worst, no row is ever frozen: after about two billion transactions (one per
 * grant, so weeks for a busy instance) rows written before would look as if written in the
 * future, and vanish. In single-user mode PostgreSQL does not stop to prevent that, since that is
 * the mode meant for fixing it.
 *
 * So the maintenance sweep asks this module, once a minute, which tables autovacuum would treat,
 * by autovacuum's own rule and settings (the `autovacuum_*` thresholds and scale factors and
 * `autovacuum_freeze_max_age`, read from the server; PostgreSQL documentation, "The Autovacuum
 * Daemon"), and runs VACUUM or ANALYZE on the most urgent one. A table's VACUUM freezes
 * its old rows on its own once its oldest is older than `vacuum_freeze_table_age` (150 million
 * transactions), before autovacuum's 200 million would force it. System catalogs are included:
 * the database's own horizon (`datfrozenxid`) advances only once every table of it is frozen.
 *
 * One table and one command per sweep, because PGlite has one connection: every statement waits
 * while VACUUM or ANALYZE runs (requests that need no statement, such as the key set, discovery,
 * client credentials and introspection from the engine's caches, go on). Measured on PGlite
 * with a table shaped like `tokens` after a quarter of its rows changed and a tenth deleted:
 * VACUUM 0.3 s at 200,000 rows and 2.2 s at a million, ANALYZE 0.4 and 0.7 s (the sweep keeps
 * the tables of an identity provider far smaller than that). A table due for both is vacuumed in one
 * sweep and analysed in a later one, so the longest wait is one of them. On PostgreSQL this
 * does nothing: its own autovacuum runs in its own processes.
 */

/** What the statistics say of one table, and what autovacuum would do to it now. */
export type TableDue = { table: string; action: "vacuum" | "analyze"; reason: "wraparound" | "dead rows" | "inserts" | "changes" };

// The thresholds are autovacuum's: each table's own `autovacuum_*` storage parameters are not
// read (Torii sets none), the server's settings are. `reltuples` is -1 for a table never vacuumed
// or analysed, so it counts as empty, as autovacuum counts it.
const DUE_TABLES = `
WITH s AS (
  SELECT current_setting('autovacuum_vacuum_threshold')::float8 AS vt,
         current_setting('autovacuum_vacuum_scale_factor')::float8 AS vs,
         current_setting('autovacuum_vacuum_insert_threshold')::float8 AS it,
         current_setting('autovacuum_vacuum_insert_scale_factor')::float8 AS "is",
         current_setting('autovacuum_analyze_threshold')::float8 AS at,
         current_setting('autovacuum_analyze_scale_factor')::float8 AS "as",
         coalesce($1::float8, current_setting('autovacuum_freeze_max_age')::float8) AS freeze_max_age
), t AS (
  SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name,
         n.nspname IN ('pg_catalog', 'information_schema') AS catalog,
         age(c.relfrozenxid)::float8 AS xid_age,
         greatest(c.reltuples, 0)::float8 AS tuples,
         coalesce(st.n_dead_tup, 0)::float8 AS dead,
         coalesce(st.n_ins_since_vacuum, 0)::float8 AS ins,
         coalesce(st.n_mod_since_analyze, 0)::float8 AS mod
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_stat_all_tables st ON st.relid = c.oid
   WHERE c.relkind IN ('r', 'm') AND c.relpersistence = 'p'
)
SELECT name AS table,
       CASE WHEN xid_age > freeze_max_age THEN 'wraparound'
            WHEN dead > vt + vs * tuples THEN 'dead rows'
            WHEN ins > it + "is" * tuples THEN 'inserts'
            WHEN NOT catalog AND mod > at + "as" * tuples THEN 'changes' END AS reason
  FROM t, s
 WHERE xid_age > freeze_max_age OR dead > vt + vs * tuples OR ins > it + "is" * tuples
    OR (NOT catalog AND mod > at + "as" * tuples)
 ORDER BY xid_age > freeze_max_age DESC, NOT catalog DESC, dead DESC, xid_age DESC`;

/** The tables autovacuum would treat now, the most urgent first: wraparound, then Torii's own tables by dead rows. */
export async function tablesDue(database: Database, freezeMaxAge?: number): Promise<TableDue[]> {
  const rows = (await database.query(DUE_TABLES, [freezeMaxAge ?? null])) as { table: string; reason: TableDue["reason"] }[];
  return rows.map((r) => ({ table: r.table, reason: r.reason, action: r.reason === "changes" ? "analyze" : "vacuum" }));
}

/**
 * Vacuums or analyses the most urgent table autovacuum would treat, on PGlite; returns what it did
 * (nothing on PostgreSQL, or when no table is due). `freezeMaxAge` stands in for the server's
 * `autovacuum_freeze_max_age` (tests; it cannot be changed without a restart).
 */
export async function vacuumMostDue(database: Database, opts: { freezeMaxAge?: number } = {}): Promise<TableDue | undefined> {
  if (database.kind !== "pglite") return undefined;
  const [due] = await tablesDue(database, opts.freezeMaxAge);
  if (!due) return undefined;
  // Alone, through the simple protocol: VACUUM cannot run inside a transaction or a group of
  // statements. The name comes from pg_class, quoted by quote_ident.
  const session = await database.session();
  try {
    await session.exec(`${due.action === "vacuum" ? "VACUUM" : "ANALYZE"} ${due.table}`);
  } finally {
    await session.release();
  }
  return due;
}
