import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "@/lib/db/client";
import { purgeExpiredRows } from "@/lib/maintenance";
import { AUTH_REQUEST_LIFETIME_SECONDS, createAuthRequest } from "@/lib/store/auth-requests";
import { hitRateLimit } from "@/lib/store/rate-limit";
import { createUserAgent } from "@/lib/store/sessions";
import { startTestInstance, type TestInstance } from "./harness";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const count = async (table: string) =>
  resultRows<{ n: number }>(await t.inst.db.execute(sql.raw(`SELECT count(*)::int AS n FROM ${table}`)))[0]!.n;

describe("maintenance", () => {
  it("sweeps ended rate-limit windows and expired replay guards, keeping live ones", async () => {
    const now = new Date();
    await hitRateLimit(t.inst.db, "old", 10, 60, new Date(now.getTime() - 120_000));
    await hitRateLimit(t.inst.db, "live", 10, 60, now);
    await t.inst.db.execute(
      sql`INSERT INTO used_jtis (issuer, jti, expires_at) VALUES ('c', 'old', ${new Date(now.getTime() - 1000).toISOString()}), ('c', 'live', ${new Date(now.getTime() + 60_000).toISOString()})`,
    );
    await purgeExpiredRows(t.inst.db, now);
    const keys = resultRows<{ key: string }>(await t.inst.db.execute(sql`SELECT key FROM rate_limit_counters`)).map((r) => r.key);
    expect(keys).toEqual(["live"]);
    expect(await count("used_jtis")).toBe(1);
  });

  it("purges authorization requests past their lifetime, keeping pending ones", async () => {
    const now = new Date();
    const ua = await createUserAgent(t.inst.db);
    const request = {
      userAgentId: ua.id,
      clientId: "c",
      redirectUri: "https://rp.example/cb",
      responseType: "code",
      responseMode: "query",
      scopes: ["openid"],
      locale: "en",
    };
    const expired = await createAuthRequest(t.inst.db, request, new Date(now.getTime() - AUTH_REQUEST_LIFETIME_SECONDS * 1000 - 1000));
    const live = await createAuthRequest(t.inst.db, request, now);
    await purgeExpiredRows(t.inst.db, now);
    const hashes = resultRows<{ id_hash: string }>(await t.inst.db.execute(sql`SELECT id_hash FROM auth_requests`)).map((r) => r.id_hash);
    expect(hashes).not.toContain(expired.row.idHash);
    expect(hashes).toContain(live.row.idHash);
  });

  it("counts within one window and starts over in the next", async () => {
    const w = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const r1 = await hitRateLimit(t.inst.db, "k", 2, 60, new Date(w.getTime() + 1000));
    const r2 = await hitRateLimit(t.inst.db, "k", 2, 60, new Date(w.getTime() + 2000));
    const r3 = await hitRateLimit(t.inst.db, "k", 2, 60, new Date(w.getTime() + 3000));
    expect([r1.allowed, r2.allowed, r3.allowed]).toEqual([true, true, false]);
    expect(r3.retryAfterSeconds).toBe(57);
    const next = await hitRateLimit(t.inst.db, "k", 2, 60, new Date(w.getTime() + 61_000));
    expect(next).toMatchObject({ allowed: true, count: 1 });
  });
});
