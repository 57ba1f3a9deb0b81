import { PGlite } from "@electric-sql/pglite";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
const BASE = ["max_connections = 100","dynamic_shared_memory_type = posix","max_wal_size = 1GB","min_wal_size = 80MB","log_timezone = UTC","datestyle = 'iso, mdy'","timezone = UTC","lc_messages = C","lc_monetary = C","lc_numeric = C","lc_time = C","default_text_search_config = 'pg_catalog.english'","shared_buffers = 32MB","wal_buffers = 1MB","maintenance_work_mem = 16MB","temp_buffers = 4MB","work_mem = 4MB"];
const extra = process.argv[2] ? process.argv[2].split(";") : [];
const N = Number(process.argv[3] ?? 6000); const G = Number(process.argv[4] ?? 1); const NOAUDIT = process.argv[5] === 'noaudit';
const dir = "/tmp/mb/data-" + process.pid;
fs.cpSync("/tmp/mb/seed", dir, { recursive: true });
const pg = new PGlite(dir, { postgresqlconf: [...BASE, ...extra] });
await pg.waitReady;
const id = () => randomBytes(16).toString("base64url");
await pg.exec(`PREPARE r(timestamptz, text, text, text, text, text, text) AS
WITH w0 AS (UPDATE tokens SET rotated_at = $1 WHERE id = $2 AND token_hash = $3 AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > $1 RETURNING id),
w1 AS (INSERT INTO tokens (id, kind, token_hash, client_id, user_id, session_id, grant_id, family_id, scopes, audience, actor, created_at, expires_at) VALUES ($4, 'refresh', $5, 'web', 'user1', 'sess1', 'grant1', $6, '{openid,offline_access}', '{}', NULL, $1, $1 + interval '30 days')),
${NOAUDIT ? 'w2 AS (SELECT 1) ' : `w2 AS (INSERT INTO audit_events (occurred_at, actor_type, actor_id, action, target_type, target_id, client_id, ip, user_agent, details) VALUES ($1, 'client', 'web', 'token.refreshed', 'refresh_family', $6, 'web', '127.0.0.1', 'autocannon', jsonb_build_object('grantId', 'grant1', 'scopes', $7::text))) 
`}SELECT 1 / (SELECT count(*) FROM w0)`);
const ring = (await pg.query("SELECT id, token_hash, family_id FROM tokens WHERE rotated_at IS NULL LIMIT 64")).rows;
const t0 = process.hrtime.bigint(); const c0 = process.cpuUsage();
for (let i = 0; i < N; i += G) {
  let text = "";
  for (let j = 0; j < G; j++) {
    const k = (i + j) % ring.length; const t = ring[k];
    const nt = { id: id(), token_hash: id(), family_id: t.family_id };
    const now = new Date().toISOString();
    text += `EXECUTE r('${now}', '${t.id}', '${t.token_hash}', '${nt.id}', '${nt.token_hash}', '${nt.family_id}', 'openid offline_access');`;
    ring[k] = nt;
  }
  await pg.exec(text);
}
const ms = Number(process.hrtime.bigint() - t0) / 1e6; const cu = process.cpuUsage(c0);
const wal = (await pg.query("select wal_records, wal_fpi, wal_bytes from pg_stat_wal")).rows[0];
console.log(JSON.stringify({ G, N, usPerOp: (1000 * ms / N).toFixed(1), cpuUsPerOp: ((cu.user + cu.system) / N).toFixed(1), wal }));
await pg.close();
fs.rmSync(dir, { recursive: true, force: true });
