import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestInstance, type TestInstance } from "./harness";
import { makeClient, REDIRECT } from "./authorize-support";

/**
 * The browser endpoints server.ts serves itself (lib/server/routes.ts, BROWSER_ROUTES), here
 * without the stand-in for Next: what the browser sees must be what Next's routes gave.
 */
let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

describe("authorize, its callback and end_session without Next", () => {
  it("authorize answers a bad client with its own page and policy, never framed", async () => {
    const res = await fetch(`${t.baseUrl}/oauth/v2/authorize?client_id=nobody&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&scope=openid`);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("content-security-policy")).toMatch(/frame-ancestors 'none'/);
    expect(res.headers.get("content-security-policy")).toMatch(/style-src 'sha256-/);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("authorize sends a valid request on to the login page, by GET and by POST", async () => {
    const client = await makeClient(t);
    const params = { client_id: client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid", state: "s1" };
    const get = await fetch(`${t.baseUrl}/oauth/v2/authorize?${new URLSearchParams(params)}`, { redirect: "manual" });
    expect(get.status).toBe(302);
    expect(new URL(get.headers.get("location")!, t.baseUrl).pathname).toMatch(/^\/ui\/login/);
    const post = await fetch(`${t.baseUrl}/oauth/v2/authorize`, { method: "POST", body: new URLSearchParams(params), redirect: "manual" });
    expect(post.status).toBe(302);
    expect(post.headers.getSetCookie().join(";")).toMatch(/HttpOnly/i);
  });

  it.each([
    ["/oauth/v2/authorize", "PUT", "GET, POST, HEAD, OPTIONS"],
    ["/oauth/v2/authorize/callback", "POST", "GET, HEAD, OPTIONS"],
    // HEAD is not a GET here: a GET with an id_token_hint signs out (found by a probe: Allow named HEAD, HEAD was refused).
    ["/oidc/v1/end_session", "DELETE", "GET, POST, OPTIONS"],
    ["/oidc/v1/end_session", "HEAD", "GET, POST, OPTIONS"],
  ])("%s refuses %s with 405 and says what is allowed", async (path, method, allow) => {
    const res = await fetch(t.baseUrl + path, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe(allow);
    const options = await fetch(t.baseUrl + path, { method: "OPTIONS" });
    expect(options.status).toBe(204);
    expect(options.headers.get("allow")).toBe(allow);
  });

  it("end_session without a session sends the browser to the signed-out page", async () => {
    const res = await fetch(`${t.baseUrl}/oidc/v1/end_session`, { redirect: "manual" });
    expect([302, 303]).toContain(res.status);
    expect(res.headers.get("location")).toMatch(/\/ui\/login\/signed-?out/);
  });
});
