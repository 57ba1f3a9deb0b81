import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditEvents, instanceSettings, type RateLimits } from "@/db/schema";
import { activeSigningKey } from "@/lib/keys/signing-keys";
import { getSettings } from "@/lib/store/settings";
import { startTestInstance, type TestInstance } from "./harness";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const put = (path: string, json: unknown) => t.api("/management/v1" + path, { method: "PUT", json });
const get = (path: string) => t.api("/management/v1" + path);

async function fieldPaths(res: Response): Promise<string[]> {
  expect(res.status).toBe(400);
  return (await res.json()).fields.map((f: { path: string }) => f.path);
}

// 1x1 transparent PNG.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10" fill="#c2410c"/></svg>';
const dataUrl = (type: string, bytes: Buffer | string) => `data:${type};base64,${Buffer.from(bytes).toString("base64")}`;

describe("features", () => {
  it("are off by default and toggled with PUT, with an audit event", async () => {
    expect(await (await get("/features")).json()).toEqual({ tokenExchange: false, impersonation: false });
    const res = await put("/features", { tokenExchange: true });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ tokenExchange: true, impersonation: false });
    expect(await (await get("/features")).json()).toEqual({ tokenExchange: true, impersonation: false });
    expect((await getSettings(t.inst)).features.tokenExchange).toBe(true);
    await put("/features", { tokenExchange: false, impersonation: true });
    expect(await (await get("/features")).json()).toEqual({ tokenExchange: false, impersonation: true });
    expect(await fieldPaths(await put("/features", { tokenExchange: "yes", other: true }))).toEqual(["tokenExchange", "other"]);
    const events = await t.inst.db.select().from(auditEvents).where(eq(auditEvents.action, "features.updated"));
    expect(events).toHaveLength(2);
    expect(events[0]!.actorType).toBe("user");
  });
});

describe("signing keys", () => {
  it("lists public metadata only and rotates on demand", async () => {
    const before = await (await get("/keys")).json();
    expect(before.keys).toHaveLength(1);
    expect(Object.keys(before.keys[0]).sort()).toEqual(["alg", "createdAt", "kid", "removeAfter", "retiredAt", "status"]);
    expect(before.keys[0]).toMatchObject({ alg: "RS256", status: "active" });

    const res = await t.api("/management/v1/keys/rotate", { method: "POST" });
    expect(res.status).toBe(200);
    const r = await res.json();
    expect(r.kid).not.toBe(before.keys[0].kid);
    expect(r.retired).toEqual([before.keys[0].kid]);
    // Published at once, but the previous key signs until relying parties' cached key sets
    // (max-age IDP_JWKS_MAX_AGE, 300 s here) can have fetched the new one.
    expect((await activeSigningKey(t.inst)).kid).toBe(before.keys[0].kid);

    const after = await (await get("/keys")).json();
    expect(after.keys.map((k: { kid: string; status: string }) => [k.kid, k.status])).toEqual([
      [before.keys[0].kid, "active"],
      [r.kid, "next"],
    ]);
    const old = after.keys[0];
    expect(new Date(old.retiredAt).getTime() - Date.now()).toBeGreaterThan(290_000);
    const jwks = await (await fetch(t.baseUrl + "/oauth/v2/keys")).json();
    expect(jwks.keys.map((k: { kid: string }) => k.kid).sort()).toEqual([before.keys[0].kid, r.kid].sort());

    const [ev] = await t.inst.db.select().from(auditEvents).where(eq(auditEvents.targetId, r.kid));
    expect(ev).toMatchObject({ action: "signing_key.rotated", actorType: "user" });
    expect((await get("/keys/rotate")).status).toBe(405);
  });
});

describe("settings", () => {
  it("reads defaults and merges partial updates, nested objects included", async () => {
    const s = await (await get("/settings")).json();
    expect(s).toMatchObject({ primaryDomain: "127.0.0.1", defaultLocale: "en" });
    expect(s.lifetimes.accessToken).toBe(3600);
    expect(s.rateLimits.jwksPerMinute).toBe(300);
    expect(s.lockoutPolicy).toEqual({
      windowSeconds: 3600,
      freeFailures: 5,
      addressFreeFailures: 100,
      maxDelaySeconds: 900,
      lockAfterFailures: 50,
      lockSeconds: 3600,
    });
    expect(s.rateLimits.registrationPerHour).toBe(20);
    expect(s.retention).toEqual({ auditDays: 90 });
    expect(s.passwordPolicy.minLength).toBe(10);

    const res = await put("/settings", {
      primaryDomain: "Example.COM",
      defaultLocale: "de",
      lifetimes: { refreshToken: 86_400 },
      lockoutPolicy: { freeFailures: 3 },
      rateLimits: { jwksPerMinute: 50 },
      retention: { auditDays: 30 },
    });
    expect(res.status).toBe(200);
    const n = await res.json();
    expect(n).toMatchObject({ primaryDomain: "example.com", defaultLocale: "de" });
    expect(n.lifetimes).toMatchObject({ refreshToken: 86_400, accessToken: 3600 });
    expect(n.lockoutPolicy).toMatchObject({ freeFailures: 3, windowSeconds: 3600, lockAfterFailures: 50 });
    expect(n.retention).toEqual({ auditDays: 30 });
    expect(n.rateLimits.jwksPerMinute).toBe(50);
    expect((await getSettings(t.inst)).primaryDomain).toBe("example.com");
    // The login name of users follows the primary domain.
    const users = await (await get("/users?search=admin")).json();
    expect(users.users[0].loginName).toBe("admin@example.com");
    await put("/settings", {
      primaryDomain: "127.0.0.1",
      defaultLocale: "en",
      rateLimits: { jwksPerMinute: 300 },
      lockoutPolicy: { freeFailures: 5 },
      retention: { auditDays: 90 },
    });
  });

  it("refuses bad values with field paths", async () => {
    const paths = await fieldPaths(
      await put("/settings", {
        primaryDomain: "https://x.example/",
        defaultLocale: "es",
        lifetimes: { accessToken: 0, nope: 1 },
        lockoutPolicy: { freeFailures: "3", maxFailures: 3 },
        passwordPolicy: { minLength: 1000 },
        retention: { auditDays: 0 },
      }),
    );
    expect(paths.sort()).toEqual([
      "defaultLocale",
      "lifetimes.accessToken",
      "lifetimes.nope",
      "lockoutPolicy.freeFailures",
      "lockoutPolicy.maxFailures",
      "passwordPolicy.minLength",
      "primaryDomain",
      "retention.auditDays",
    ]);
    expect(await fieldPaths(await put("/settings", { lifetimes: { sessionIdle: 400 * 86_400, sessionAbsolute: 3600 } }))).toEqual([
      "lifetimes.sessionIdle",
    ]);
    expect((await put("/settings", {})).status).toBe(200);
    const [ev] = await t.inst.db.select().from(auditEvents).where(eq(auditEvents.action, "settings.updated"));
    expect(ev).toBeTruthy();
  });

  it("takes only the rate limits something enforces, and forgets names an earlier version kept", async () => {
    const res = await put("/settings", { rateLimits: { tokensPerMinute: 10, constructor: 5, "": 1 } });
    expect((await fieldPaths(res)).sort()).toEqual(["rateLimits.", "rateLimits.constructor", "rateLimits.tokensPerMinute"]);
    // As an earlier version stored any name it was given.
    const [row] = await t.inst.db.select().from(instanceSettings);
    await t.inst.db.update(instanceSettings).set({ rateLimits: { ...row!.rateLimits, constructor: 5, "a b": 7 } as RateLimits });
    const shown = (await (await get("/settings")).json()).rateLimits as Record<string, number>;
    expect(Object.keys(shown).sort()).toEqual(["jwksPerMinute", "registrationPerHour", "tokenPerMinute"]);
    const saved = await put("/settings", { rateLimits: { tokenPerMinute: 5000 } });
    expect(saved.status).toBe(200);
    expect((await saved.json()).rateLimits).toEqual({ ...shown, tokenPerMinute: 5000 });
    const [after] = await t.inst.db.select().from(instanceSettings);
    expect(Object.keys(after!.rateLimits).sort()).toEqual(["jwksPerMinute", "registrationPerHour", "tokenPerMinute"]);
    await put("/settings", { rateLimits: { tokenPerMinute: shown.tokenPerMinute } });
  });
});

describe("branding", () => {
  it("reads defaults and updates colors, name and dark mode", async () => {
    expect(await (await get("/branding")).json()).toEqual({
      productName: "Torii",
      logoUrl: null,
      primaryColor: "#c2410c",
      backgroundColor: "#fafaf9",
      darkMode: "auto",
    });
    const res = await put("/branding", { productName: "Acme ID", primaryColor: "#00AA11", darkMode: "dark" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ productName: "Acme ID", primaryColor: "#00aa11", backgroundColor: "#fafaf9", darkMode: "dark" });
    const paths = await fieldPaths(await put("/branding", { primaryColor: "red", backgroundColor: "#12345", darkMode: "sepia", productName: "" }));
    expect(paths.sort()).toEqual(["backgroundColor", "darkMode", "primaryColor", "productName"]);
  });

  it("stores a logo, serves it with ETag, cache headers and 304, and removes it with null", async () => {
    const res = await put("/branding", { logo: dataUrl("image/png", PNG) });
    expect(res.status).toBe(200);
    const b = await res.json();
    expect(b.logoUrl).toMatch(new RegExp(`^${t.issuer}/ui/branding/logo\\?v=`));
    const [row] = await t.inst.db.select().from(instanceSettings);
    expect(row!.logoContentType).toBe("image/png");
    expect(Buffer.compare(row!.logo!, PNG)).toBe(0);

    const logo = await fetch(b.logoUrl);
    expect(logo.status).toBe(200);
    expect(logo.headers.get("content-type")).toBe("image/png");
    expect(logo.headers.get("cache-control")).toMatch(/max-age=\d+/);
    expect(Buffer.compare(Buffer.from(await logo.arrayBuffer()), PNG)).toBe(0);
    const etag = logo.headers.get("etag")!;
    expect(etag).toMatch(/^".+"$/);
    const again = await fetch(t.baseUrl + "/ui/branding/logo", { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);

    await put("/branding", { logo: dataUrl("image/svg+xml", SVG) });
    const svg = await fetch(t.baseUrl + "/ui/branding/logo");
    expect(svg.headers.get("content-type")).toBe("image/svg+xml");
    expect(svg.headers.get("etag")).not.toBe(etag);
    const csp = svg.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("sandbox");
    expect(csp).not.toMatch(/script-src/);
    expect(svg.headers.get("x-content-type-options")).toBe("nosniff");

    const removed = await (await put("/branding", { logo: null })).json();
    expect(removed.logoUrl).toBeNull();
    expect((await fetch(t.baseUrl + "/ui/branding/logo")).status).toBe(404);
    expect((await fetch(t.baseUrl + "/ui/branding/logo", { method: "POST" })).status).toBe(405);
  });

  it("refuses logos that are not a small image of an allowed type", async () => {
    const bad = async (logo: unknown) => fieldPaths(await put("/branding", { logo }));
    expect(await bad("https://example.com/logo.png")).toEqual(["logo"]);
    expect(await bad(dataUrl("image/gif", Buffer.from("GIF89a")))).toEqual(["logo"]);
    expect(await bad(dataUrl("image/png", Buffer.from("not a png")))).toEqual(["logo"]);
    expect(await bad(dataUrl("image/svg+xml", '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'))).toEqual(["logo"]);
    expect(await bad(dataUrl("image/svg+xml", '<svg onload="alert(1)"></svg>'))).toEqual(["logo"]);
    const big = Buffer.concat([PNG.subarray(0, 8), Buffer.alloc(512 * 1024)]);
    expect(await bad(dataUrl("image/png", big))).toEqual(["logo"]);
  });
});

describe("GET /management/v1/audit", () => {
  it("lists events newest first, filtered and paged", async () => {
    const c = await (
      await t.api("/management/v1/clients", { method: "POST", json: { name: "Audited", grantTypes: ["client_credentials"] } })
    ).json();
    await t.api(`/management/v1/clients/${c.clientId}/secret`, { method: "POST" });
    const res = await get(`/audit?clientId=${c.clientId}`);
    expect(res.status).toBe(200);
    const page = await res.json();
    expect(page.events.map((e: { action: string }) => e.action)).toEqual(["client.secret_rotated", "client.created"]);
    expect(page.total).toBe(2);
    const e = page.events[1];
    expect(e).toMatchObject({ actorType: "user", targetType: "client", targetId: c.clientId, ip: "127.0.0.1" });
    expect(new Date(e.occurredAt).toISOString()).toBe(e.occurredAt);

    const byAction = await (await get("/audit?action=client.created&limit=1")).json();
    expect(byAction.events).toHaveLength(1);
    expect(byAction.events[0].action).toBe("client.created");
    const byActor = await (await get(`/audit?actorId=${e.actorId}&targetId=${c.clientId}`)).json();
    expect(byActor.total).toBe(2);
    const future = await (await get(`/audit?from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).json();
    expect(future.total).toBe(0);
    const past = await (await get(`/audit?to=2000-01-01T00:00:00Z`)).json();
    expect(past.total).toBe(0);
    const all = await (await get("/audit?limit=500")).json();
    expect(all.events.some((x: { action: string }) => x.action === "instance.bootstrapped")).toBe(true);
    expect(await fieldPaths(await get("/audit?from=yesterday&limit=9999"))).toEqual(["from", "limit"]);
  });
});
