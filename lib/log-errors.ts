import { stdSerializers } from "pino";

/**
 * How an error appears in the logs. A failed database query carries its SQL parameters
 * (Drizzle's "Failed query: … params: alice,alice@example.com"), and the database's own error its
 * `detail` ("Key (lower(username))=(alice) already exists") and sometimes the offending input in
 * its message: personal data that must not reach the logs. Such errors are logged by their class,
 * a name for the query (`insert users`), the SQLSTATE code and constraint, and the stack frames
 * without the message. Other errors keep pino's standard form.
 */
export function errorForLog(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const db = databaseError(err);
  if (!db) return stdSerializers.err(err);
  const cause = db.cause as { code?: unknown; constructor?: { name?: string } } | undefined;
  const source = (cause && typeof cause === "object" ? cause : db) as Record<string, unknown>;
  // node-postgres and PGlite name them `constraint` and `table`, postgres.js `constraint_name` and `table_name`.
  const constraint = source.constraint ?? source.constraint_name;
  const table = source.table ?? source.table_name;
  return {
    type: err.constructor.name,
    ...(db !== err ? { causeType: db.constructor.name } : {}),
    ...(cause && typeof cause === "object" && cause.constructor?.name ? { dbError: cause.constructor.name } : {}),
    query: queryName(typeof db.query === "string" ? db.query : undefined),
    code: typeof source.code === "string" ? source.code : undefined,
    constraint: typeof constraint === "string" ? constraint : undefined,
    table: typeof table === "string" ? table : undefined,
    stack: framesOnly(err.stack),
  };
}

type DbError = Error & { query?: unknown; params?: unknown; cause?: unknown };

/** The error itself or one of its causes that came from a query (it names SQL, parameters or detail). */
function databaseError(err: Error): DbError | undefined {
  let e: unknown = err;
  for (let depth = 0; e instanceof Error && depth < 5; depth++) {
    const x = e as DbError & { detail?: unknown; severity?: unknown };
    if ("params" in x || "query" in x || "detail" in x || "severity" in x) return x;
    e = x.cause;
  }
  return undefined;
}

/** `select users`, `insert sessions`, … : what the query did to which table, never its values. */
export function queryName(query: string | undefined): string | undefined {
  if (!query) return undefined;
  const q = query.replace(/\s+/g, " ").trim();
  const verb = /^(with|select|insert|update|delete)\b/i.exec(q)?.[1]?.toLowerCase() ?? "query";
  const table = /\b(?:from|into|update)\s+"?([A-Za-z_][A-Za-z0-9_]*)"?/i.exec(q)?.[1];
  return table ? `${verb} ${table}` : verb;
}

function framesOnly(stack: string | undefined): string | undefined {
  if (!stack) return undefined;
  const frames = stack.split("\n").filter((l) => /^\s+at /.test(l));
  return frames.length ? frames.join("\n") : undefined;
}
