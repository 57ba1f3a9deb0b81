import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestInstance, type TestInstance } from "./harness";
import { inOneMinuteWindow } from "./minute-window";

/** Issue 16, defect 3: behind IDP_TRUSTED_PROXIES, limits and audit events use the address the proxy saw. */
let p: TestInstance;
beforeAll(async () => {
  p = await startTestInstance({ IDP_TRUSTED_PROXIES: "127.0.0.1/32,::1" });
  const r = await p.api("/management/v1/settings", { method: "PUT", json: { rateLimits: { jwksPerMinute: 3 } } });
  expect(r.status).toBe(200);
});
describe("limits and audit use the resolved address", () => {
afterAll(() => p.close());

  it("a forged leftmost X-Forwarded-For entry does not escape the JWKS limit", async () => {
    await inOneMinuteWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await fetch(p.baseUrl + "/oauth/v2/keys", { headers: { "x-forwarded-for": `192.0.2.${i}, 203.0.113.50` } });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses.slice(3)).toEqual([429, 429, 429]);
    // Another real client behind the same proxy has its own budget.
    expect((await fetch(p.baseUrl + "/oauth/v2/keys", { headers: { "x-forwarded-for": "203.0.113.51" } })).status).toBe(200);
  });

  it("an audit event records the address the proxy saw, not the one the client wrote", async () => {
    const res = await fetch(p.baseUrl + "/oauth/v2/token", {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: "Basic " + Buffer.from("no-such-client:x").toString("base64"),
        "x-forwarded-for": "192.0.2.77, 203.0.113.60",
      },
      body: "grant_type=client_credentials",
    });
    expect(res.status).toBe(401);
    const audit = await (await p.api("/management/v1/audit?action=client.authentication_failed")).json();
    expect(audit.events.map((e: { ip: string }) => e.ip)).toContain("203.0.113.60");
    expect(audit.events.map((e: { ip: string }) => e.ip)).not.toContain("192.0.2.77");
  });
});
