import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestInstance, type TestInstance } from "./harness";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

describe("security headers", () => {
  it("are on every response: nosniff, a referrer policy, no framing", async () => {
    for (const p of ["/.well-known/openid-configuration", "/oauth/v2/keys", "/healthz", "/no-such-path"]) {
      const res = await fetch(t.baseUrl + p);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("same-origin");
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    }
  });

  it("has no HSTS on an http issuer", async () => {
    const res = await fetch(t.baseUrl + "/healthz");
    expect(res.headers.get("strict-transport-security")).toBeNull();
  });
});

describe("health", () => {
  it("/healthz answers while the process runs", async () => {
    const res = await fetch(t.baseUrl + "/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("/readyz reports the database reachable and migrated", async () => {
    const res = await fetch(t.baseUrl + "/readyz");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "ready" });
  });

  it("a probe may GET or HEAD them; another method is a 405 with Allow", async () => {
    for (const path of ["/healthz", "/readyz"]) {
      const head = await fetch(t.baseUrl + path, { method: "HEAD" });
      expect(head.status, path).toBe(200);
      expect(await head.text()).toBe("");
      for (const method of ["POST", "PUT", "DELETE"]) {
        const res = await fetch(t.baseUrl + path, { method });
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
      }
    }
  });

  it("a request body over 1 MiB is refused with 413, not read", async () => {
    const res = await fetch(t.baseUrl + "/oauth/v2/keys", { method: "POST", body: "x".repeat(1024 * 1024 + 10) });
    expect(res.status).toBe(413);
  });
});

describe("HSTS on an https issuer", () => {
  let h: TestInstance;
  beforeAll(async () => {
    h = await startTestInstance({ IDP_ISSUER: "https://id.example.test" });
  });
  afterAll(() => h.close());
  it("is sent with every response", async () => {
    const res = await fetch(h.baseUrl + "/healthz");
    expect(res.headers.get("strict-transport-security")).toMatch(/max-age=\d+/);
    const doc = await (await fetch(h.baseUrl + "/.well-known/openid-configuration")).json();
    expect(doc.issuer).toBe("https://id.example.test");
    expect(doc.jwks_uri).toBe("https://id.example.test/oauth/v2/keys");
  });
});
