import { PGlite } from "@electric-sql/pglite";
const mb = (x) => Math.round(x / 1048576);
const show = (l) => { const m = process.memoryUsage(); console.log(l, "rss", mb(m.rss), "heapUsed", mb(m.heapUsed), "ext", mb(m.external)); };
show("start");
const db = new PGlite(process.argv[2], { postgresqlconf: ["shared_buffers = 32MB","wal_buffers = 1MB","maintenance_work_mem = 16MB","temp_buffers = 4MB","work_mem = 4MB"] });
await db.waitReady; show("ready");
await db.exec("create table if not exists t (id text primary key, v text)");
for (let i = 0; i < 20000; i++) await db.query("insert into t values ($1, $2)", [String(Math.random()), "x".repeat(200)]);
show("after 20k inserts");
