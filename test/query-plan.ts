import { sql, type SQL } from "drizzle-orm";
import { resultRows, type Executor } from "@/lib/db/client";

/** The plan PostgreSQL would run a statement by (its text and parameters as the store sends it), one line per node. */
export async function queryPlan(db: Executor, query: { getSQL(): SQL }): Promise<string> {
  const rows = resultRows<{ "QUERY PLAN": string }>(await db.execute(sql.raw("EXPLAIN ").append(query.getSQL())));
  return rows.map((r) => r["QUERY PLAN"]).join("\n");
}

/**
 * The plan PostgreSQL would run `query` by if it could not scan a whole table: a lookup no index
 * can serve still scans (at a cost the planner treats as prohibitive, but it has no other way),
 * so a "Seq Scan" in this plan means every row would be read, whatever the table's size now. A
 * column looked up through an index shows as an "Index Cond" on it (`indexLookup`), not as a
 * filter checked row by row while some other index is walked whole, which is a scan by another name.
 */
export function planWithoutScans(db: Executor, query: { getSQL(): SQL }): Promise<string> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`SET LOCAL enable_seqscan = off`);
    return queryPlan(tx, query);
  });
}

/**
 * The line of a plan that says `column` (or one of `columns`, for a row with several keys) is
 * looked up in an index by `operand`: a value (`'`), a column of the outer row, or anything ("").
 */
export function indexLookup(columns: string | string[], operand = ""): RegExp {
  const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const names = (Array.isArray(columns) ? columns : [columns]).map(escaped).join("|");
  return new RegExp(`Index Cond: \\((?:${names}) = ${escaped(operand)}`);
}
