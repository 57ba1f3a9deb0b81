import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenThrottle } from "@/lib/http/token-throttle";
import { SlidingWindow } from "@/lib/http/sliding-window";
import { startTestInstance, type TestInstance } from "./harness";
import { FakeClock } from "./fakes/fake-clock";
import { inOneMinuteWindow } from "./minute-window";
import { basic, CHALLENGE, makeClient, makeCode, makeUser, VERIFIER } from "./token-support";

/**
 * Issue 16, defect 7: `rateLimits.tokenPerMinute` is enforced per client address and per client
 * (429 with Retry-After), and failed client authentications are audited without flooding the log.
 * The instance trusts the loopback proxy so that each request can come from an address of its own.
 */
let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance({ IDP_TRUSTED_PROXIES: "127.0.0.1/32,::1" });
  const r = await t.api("/management/v1/settings", { method: "PUT", json: { rateLimits: { tokenPerMinute: 5 } } });
  expect(r.status).toBe(200);
});
afterAll(() => t.close());

const tokenRequest = (auth: string, from: string) =>
  fetch(t.baseUrl + "/oauth/v2/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: auth, "x-forwarded-for": from },
    body: "grant_type=client_credentials",
  });

describe("token endpoint rate limit", () => {
  it("per address: wrong secrets are stopped with 429, Retry-After and a JSON error", async () => {
    const { client } = await makeClient(t, { grantTypes: ["client_credentials"] });
    await inOneMinuteWindow();
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 8; i++) {
      last = await tokenRequest(basic(client.id, "wrong"), "198.51.100.1");
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(last!.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect(last!.headers.get("content-type")).toMatch(/application\/json/);
    expect(await last!.json()).toEqual({ error: "rate_limited", error_description: expect.any(String) });
  });

  it("per address: an IPv6 client is counted by its /64, however it changes the lower half", async () => {
    const { client } = await makeClient(t, { grantTypes: ["client_credentials"] });
    await inOneMinuteWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await tokenRequest(basic(client.id, "wrong"), `2001:db8:5:6::${(i + 1).toString(16)}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    // Another /64 has a budget of its own.
    expect((await tokenRequest(basic(client.id, "wrong"), "2001:db8:5:7::1")).status).toBe(401);
  });

  it("per client: its own requests from many addresses are limited, and nobody else can use up its share", async () => {
    const { client, secret } = await makeClient(t, { grantTypes: ["client_credentials"] });
    await inOneMinuteWindow();
    // Strangers naming the client with wrong secrets do not count against it.
    for (let i = 0; i < 5; i++) expect((await tokenRequest(basic(client.id, "wrong"), `203.0.113.${100 + i}`)).status).toBe(401);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await tokenRequest(basic(client.id, secret!), `203.0.113.${i + 1}`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    // Another client is not affected.
    const other = await makeClient(t, { grantTypes: ["client_credentials"] });
    expect((await tokenRequest(basic(other.client.id, other.secret!), "203.0.113.50")).status).toBe(200);
  });

  it("a public client: strangers sending its client_id cannot use up its users' share; each address is still limited", async () => {
    const { client } = await makeClient(t, { authMethod: "none", grantTypes: ["authorization_code", "refresh_token"] });
    const user = await makeUser(t);
    const exchange = (code: string, from: string) =>
      fetch(t.baseUrl + "/oauth/v2/token", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": from },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb", client_id: client.id, code_verifier: VERIFIER }).toString(),
      });
    await inOneMinuteWindow();
    // Ten requests naming the client (twice the limit), each from an address of its own.
    for (let i = 0; i < 10; i++) expect((await exchange(`made-up-${i}`, `198.51.100.${20 + i}`)).status).toBe(400);
    // A user of the application, from another address, still gets tokens.
    const { code } = await makeCode(t, { client, user, challenge: CHALLENGE });
    const res = await exchange(code, "198.51.100.99");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { access_token?: string }).access_token).toEqual(expect.any(String));
    // One address sending more than the limit is refused, as for any client.
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await exchange(`made-up-again-${i}`, "198.51.100.77")).status);
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429, 429]);
  });

  it("a flood of failed authentications writes one sampled audit event per client and address a minute", async () => {
    await t.api("/management/v1/settings", { method: "PUT", json: { rateLimits: { tokenPerMinute: 1000 } } });
    const { client } = await makeClient(t, { grantTypes: ["client_credentials"] });
    await inOneMinuteWindow(); // one event a minute: the 30 must fall in one
    for (let i = 0; i < 30; i++) expect((await tokenRequest(basic(client.id, `wrong${i}`), "192.0.2.200")).status).toBe(401);
    const audit = await (await t.api("/management/v1/audit?action=client.authentication_failed&limit=100")).json();
    const mine = audit.events.filter((e: { targetId: string | null }) => e.targetId === client.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ ip: "192.0.2.200", actorType: "client" });
    await t.api("/management/v1/settings", { method: "PUT", json: { rateLimits: { tokenPerMinute: 5 } } });
  });
});

describe("the counters", () => {
  it("the sliding window forgets the previous minute gradually, not all at once", () => {
    const w = new SlidingWindow(60_000);
    const start = 60_000 * 1000;
    for (let i = 0; i < 10; i++) expect(w.hit("k", 10, start + 59_000).allowed).toBe(true);
    // Just after the minute turns, nearly all of the previous minute still counts.
    expect(w.hit("k", 10, start + 61_000).allowed).toBe(false);
    // Half-way through the next minute, half of it does.
    let allowed = 0;
    for (let i = 0; i < 10; i++) if (w.hit("k", 10, start + 90_000).allowed) allowed++;
    expect(allowed).toBe(5);
  });

  it("two instances share one limit through the database, within a batch per instance", async () => {
    // Mid-minute on a clock of their own, so that the counts never straddle a window; and each
    // step waits for the batch it started to reach the database instead of sleeping.
    const clock = new FakeClock(Date.UTC(2030, 0, 1, 0, 0, 30));
    const a = new TokenThrottle(clock);
    const b = new TokenThrottle(clock);
    const key = `addr:shared-${Date.now()}`;
    const pending: Promise<unknown>[] = [];
    const counter: typeof t.inst.store.rateLimits = {
      hit: (...args) => {
        const p = t.inst.store.rateLimits.hit(...args);
        pending.push(p);
        return p;
      },
    };
    const settle = async () => {
      while (pending.length) await Promise.all(pending.splice(0));
    };
    let allowedA = 0;
    for (let i = 0; i < 10; i++) {
      if (a.hit(counter, key, 10).allowed) allowedA++;
      await settle();
    }
    expect(allowedA).toBe(10);
    let allowedB = 0;
    for (let i = 0; i < 5; i++) {
      if (b.hit(counter, key, 10).allowed) allowedB++;
      await settle();
    }
    // B admits one batch (a tenth of the limit, here one request) before it learns A's count.
    expect(allowedB).toBe(1);
  });
});
