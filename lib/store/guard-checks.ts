import { sql, type AnyColumn, type Placeholder, type SQL } from "drizzle-orm";
import { grants, refreshTokenFamilies, sessions, users } from "@/db/schema";

/**
 * What a guard (marking a code used, rotating a refresh token) checks the database still says of
 * the rows a grant read, which may have been read from memory (Store.codeRedemptions,
 * Store.issuedRefreshTokens): each a scalar subquery by the row's key, null (so not true) for a
 * missing row. Not `EXISTS`: the planner may turn that into a join that scans a small table, and
 * under an OR it hashes the EXISTS over every matching row, a scan of the whole table on every
 * grant. So each check is one index lookup whatever the size of the tables.
 */

/** The row of `table` that `id` names is not revoked (a grant, a refresh family). */
export function notRevoked(table: typeof grants | typeof refreshTokenFamilies, id: AnyColumn): SQL {
  return sql`(SELECT ${table.revokedAt} IS NULL FROM ${table} WHERE ${table.id} = ${id})`;
}

/**
 * The user `id` names is not locked and, when `version` is set (a read from memory), unchanged
 * since it was read: `updated_at` to the millisecond, which is all a JavaScript Date keeps. A read
 * just made passes null: a change committed after it must not lose the guard, since a guard lost
 * in a transaction is taken for a replay or a reuse.
 */
export function userAsRead(id: AnyColumn, version: Placeholder): SQL {
  return sql`(SELECT NOT ${users.locked} AND (${version}::timestamptz IS NULL OR date_trunc('milliseconds', ${users.updatedAt}) = ${version}::timestamptz) FROM ${users} WHERE ${users.id} = ${id})`;
}

/** The session `id` names has not ended (as sessionHasEnded, lib/store/grants.ts); true when `id` is null. */
export function sessionNotEnded(id: AnyColumn, now: Placeholder): SQL {
  return sql`COALESCE((SELECT ${sessions.endedAt} IS NULL AND ${sessions.absoluteExpiresAt} > ${now}::timestamptz FROM ${sessions} WHERE ${sessions.id} = ${id}), ${id} IS NULL)`;
}
