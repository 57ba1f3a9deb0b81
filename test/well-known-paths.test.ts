import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestInstance, type TestInstance } from "./harness";

/**
 * The addresses under the API's prefixes that name no endpoint, and the well-known address
 * password managers use to offer a password change (W3C "A Well-Known URL for Changing
 * Passwords").
 */
let t: TestInstance;
beforeAll(async () => {
  // With the stand-in for Next, so that an address the server did not answer itself would reach it.
  t = await startTestInstance({}, { nextRoutes: true });
});
afterAll(() => t.close());

describe("an address under /oauth, /oidc, /.well-known or /management that names no endpoint", () => {
  const unknown = ["/management/v2/users", "/oauth/v2/nothing", "/oauth/v2/token/extra", "/oidc/v1/nope", "/oauth/", "/.well-known/webfinger?resource=acct:a@example.com", "/.well-known/openid-configuration/extra"];

  it("is a JSON 404 that says so, with the API's headers, whatever the method", async () => {
    for (const path of unknown) {
      for (const method of ["GET", "POST", "DELETE", "OPTIONS"]) {
        const res = await fetch(t.baseUrl + path, { method, headers: { accept: "text/html" }, ...(method === "POST" ? { body: "a=b", headers: { "content-type": "application/x-www-form-urlencoded" } } : {}) });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.headers.get("content-type")).toMatch(/^application\/json/);
        expect(res.headers.get("cache-control")).toBe("no-store");
        expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
        expect(res.headers.get("x-content-type-options")).toBe("nosniff");
        const body = (await res.json()) as { error: string; error_description: string };
        expect(body.error).toBe("not_found");
        expect(body.error_description).toBe(`No such endpoint: ${new URL(path, t.baseUrl).pathname}.`);
      }
    }
  });

  it("answers HEAD with the status and no body", async () => {
    const res = await fetch(t.baseUrl + "/oidc/v1/nope", { method: "HEAD" });
    expect(res.status).toBe(404);
    expect(await res.text()).toBe("");
  });

  it("leaves the endpoints next to it as they are", async () => {
    expect((await fetch(t.baseUrl + "/.well-known/openid-configuration")).status).toBe(200);
    expect((await fetch(t.baseUrl + "/oauth/v2/keys")).status).toBe(200);
    expect((await fetch(t.baseUrl + "/oauth/v2/token", { method: "POST" })).status).toBe(400);
  });
});

describe("/.well-known/change-password", () => {
  it("redirects to the account page's password section", async () => {
    for (const method of ["GET", "HEAD"]) {
      const res = await fetch(t.baseUrl + "/.well-known/change-password", { method, redirect: "manual" });
      expect(res.status, method).toBe(302);
      expect(res.headers.get("location")).toBe(`${t.issuer}/ui/account#password`);
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
  });

  it("refuses other methods with 405 and Allow", async () => {
    const res = await fetch(t.baseUrl + "/.well-known/change-password", { method: "POST", redirect: "manual" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });

  it("is told apart from an address that does not exist, as a password manager checks (never 200 there)", async () => {
    const res = await fetch(t.baseUrl + "/.well-known/resource-that-should-not-exist-whose-status-code-should-not-be-200", { redirect: "manual" });
    expect(res.status).toBe(404);
  });
});
