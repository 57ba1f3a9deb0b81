import { sql, type SQL } from "drizzle-orm";
import { resultRows, type Executor } from "@/lib/db/client";

/** The plan PostgreSQL would run a statement by (its text and parameters as the store sends it), one line per node. */
export async function queryPlan(db: Executor, query: { getSQL(): SQL }): Promise<string> {
  const rows = resultRows<{ "QUERY PLAN": string }>(await db.execute(sql.raw("EXPLAIN ").append(query.getSQL())));
  return rows.map((r) => r["QUERY PLAN"]).join("\n");
}
