import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "@/lib/db/client";
import { updateSettings, getSettings } from "@/lib/store/settings";
import { startTestInstance, type TestInstance } from "./harness";
import { inOneMinuteWindow } from "./minute-window";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance({ IDP_JWKS_MAX_AGE: "120" });
});
afterAll(() => t.close());

describe("GET /oauth/v2/keys", () => {
  it("is cacheable with the configured max-age and an ETag, answering 304 to If-None-Match", async () => {
    const res = await fetch(t.baseUrl + "/oauth/v2/keys");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/jwk-set\+json/);
    expect(res.headers.get("cache-control")).toBe("public, max-age=120");
    const etag = res.headers.get("etag")!;
    expect(etag).toMatch(/^".+"$/);

    const again = await fetch(t.baseUrl + "/oauth/v2/keys", { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect(again.headers.get("etag")).toBe(etag);

    const other = await fetch(t.baseUrl + "/oauth/v2/keys", { headers: { "if-none-match": '"stale"' } });
    expect(other.status).toBe(200);
  });

  it("refuses other methods", async () => {
    const res = await fetch(t.baseUrl + "/oauth/v2/keys", { method: "POST" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });

  it.each(["/oauth/v2/keys", "/.well-known/openid-configuration"])("%s answers a CORS preflight from any origin, and OPTIONS without one (found by a probe: 405)", async (path) => {
    const pre = await fetch(t.baseUrl + path, { method: "OPTIONS", headers: { origin: "https://spa.example", "access-control-request-method": "GET", "access-control-request-headers": "accept-language" } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://spa.example");
    expect(pre.headers.get("access-control-allow-methods")).toBe("GET, HEAD");
    expect(pre.headers.get("access-control-allow-headers")).toContain("accept-language");
    const plain = await fetch(t.baseUrl + path, { method: "OPTIONS" });
    expect(plain.status).toBe(204);
    expect(plain.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    // The document itself is readable by every origin.
    expect((await fetch(t.baseUrl + path, { headers: { origin: "https://spa.example" } })).headers.get("access-control-allow-origin")).toBe("*");
  });

  it("rate limits per client address with 429 and Retry-After, counting in process and sharing the count through the database", async () => {
    // A fresh instance: the count lives in the process, and the tests above used this address.
    const fresh = await startTestInstance();
    try {
      const s = await getSettings(fresh.inst);
      await updateSettings(fresh.inst, { rateLimits: { ...s.rateLimits, jwksPerMinute: 3 } });
      await inOneMinuteWindow(); // the shared counter below is this minute's row
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 5; i++) {
        last = await fetch(fresh.baseUrl + "/oauth/v2/keys");
        statuses.push(last.status);
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const retry = Number(last!.headers.get("retry-after"));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
      expect((await last!.json()).error).toBe("rate_limited");
      // What this instance admitted is shared with the others through the database, in batches
      // written after the answers (here one per request, the limit being so low).
      await expect
        .poll(async () => resultRows<{ key: string; count: number }>(await fresh.inst.db.execute(sql`SELECT key, count FROM rate_limit_counters`)))
        .toEqual([{ key: "jwks:127.0.0.1", count: 3 }]);

      // Another address has its own budget (the server sets the address; a client header cannot spoof it).
      const spoofed = await fetch(fresh.baseUrl + "/oauth/v2/keys", { headers: { "x-torii-client-address": "10.9.9.9" } });
      expect(spoofed.status).toBe(429);
    } finally {
      await fresh.close();
    }
  });

  it("counts what other instances admitted: once the shared count is at the limit, this instance refuses too", async () => {
    const fresh = await startTestInstance();
    try {
      const s = await getSettings(fresh.inst);
      await updateSettings(fresh.inst, { rateLimits: { ...s.rateLimits, jwksPerMinute: 3 } });
      await inOneMinuteWindow();
      // Another instance has admitted three requests of this address in this minute.
      await fresh.inst.store.rateLimits.hit("jwks:127.0.0.1", Number.MAX_SAFE_INTEGER, 60, new Date(), 3);
      expect((await fetch(fresh.baseUrl + "/oauth/v2/keys")).status).toBe(200); // learns the shared count with this one
      await expect.poll(async () => (await fetch(fresh.baseUrl + "/oauth/v2/keys")).status).toBe(429);
    } finally {
      await fresh.close();
    }
  });
});
