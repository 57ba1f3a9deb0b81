// A PostgreSQL adapter for the bench's node-oidc-provider (bench/servers/peer.mjs, with
// PEER_DATABASE_URL): the peer as a team would run it in production, where its codes, sessions,
// grants and tokens outlive the process, so that `npm run bench -- --db=pg
// --targets=torii,peer,peer_db` can compare Torii with the peer on the same database server.
//
// node-oidc-provider ships no database adapter; this follows its adapter contract (upsert, find,
// findByUid, findByUserCode, consume, destroy, revokeByGrantId) the plain way: one table of JSON
// payloads keyed by model and id, the secondary keys it looks things up by as indexed columns,
// and every statement prepared (named) once per connection. Each call is its own statement, as the
// contract has no transactions.
import pg from "pg";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS oidc_payloads (
  model text NOT NULL,
  id text NOT NULL,
  payload jsonb NOT NULL,
  grant_id text,
  uid text,
  user_code text,
  expires_at timestamptz,
  consumed_at timestamptz,
  PRIMARY KEY (model, id)
);
CREATE INDEX IF NOT EXISTS oidc_payloads_grant_idx ON oidc_payloads (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS oidc_payloads_uid_idx ON oidc_payloads (uid) WHERE uid IS NOT NULL;
CREATE INDEX IF NOT EXISTS oidc_payloads_user_code_idx ON oidc_payloads (user_code) WHERE user_code IS NOT NULL;
`;

const UPSERT = `INSERT INTO oidc_payloads (model, id, payload, grant_id, uid, user_code, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7)
  ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
    uid = excluded.uid, user_code = excluded.user_code, expires_at = excluded.expires_at, consumed_at = NULL`;
/** A live (unexpired) entry of a model by one of its keys, with when it was consumed. */
const findBy = (column) =>
  `SELECT payload, extract(epoch FROM consumed_at)::bigint AS consumed FROM oidc_payloads WHERE model = $1 AND ${column} = $2 AND (expires_at IS NULL OR expires_at > now())`;
const FIND = findBy("id");
const FIND_BY_UID = findBy("uid");
const FIND_BY_USER_CODE = findBy("user_code");
const CONSUME = "UPDATE oidc_payloads SET consumed_at = now() WHERE model = $1 AND id = $2";
const DESTROY = "DELETE FROM oidc_payloads WHERE model = $1 AND id = $2";
const REVOKE_GRANT = "DELETE FROM oidc_payloads WHERE grant_id = $1";

/**
 * The adapter class node-oidc-provider instantiates once per model, on a pool of `poolSize`
 * connections to `url` (node-postgres runs one statement at a time per connection, so the pool
 * is what lets concurrent requests overlap).
 */
export async function postgresAdapter(url, poolSize) {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  await pool.query(SCHEMA);
  const run = (name, text, values) => pool.query({ name, text, values });
  const payloadOf = (rows) => {
    const row = rows[0];
    if (!row) return undefined;
    return row.consumed == null ? row.payload : { ...row.payload, consumed: Number(row.consumed) };
  };

  return class PostgresAdapter {
    constructor(model) {
      this.model = model;
    }
    async upsert(id, payload, expiresIn) {
      const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
      await run("upsert", UPSERT, [this.model, id, payload, payload.grantId ?? null, payload.uid ?? null, payload.userCode ?? null, expiresAt]);
    }
    async find(id) {
      return payloadOf((await run("find", FIND, [this.model, id])).rows);
    }
    async findByUid(uid) {
      return payloadOf((await run("find_by_uid", FIND_BY_UID, [this.model, uid])).rows);
    }
    async findByUserCode(userCode) {
      return payloadOf((await run("find_by_user_code", FIND_BY_USER_CODE, [this.model, userCode])).rows);
    }
    async consume(id) {
      await run("consume", CONSUME, [this.model, id]);
    }
    async destroy(id) {
      await run("destroy", DESTROY, [this.model, id]);
    }
    async revokeByGrantId(grantId) {
      await run("revoke_grant", REVOKE_GRANT, [grantId]);
    }
  };
}
