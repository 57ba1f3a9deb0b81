import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestInstance, type TestInstance } from "./harness";
import { Browser, makeClient, REDIRECT } from "./authorize-support";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

describe("an unexpected condition at the authorization endpoint", () => {
  it("reaches the redirect URI as server_error with state, and shows no internals", async () => {
    const client = await makeClient(t);
    // Storage fails after the client and redirect URI have been checked (they are cached by now).
    await new Browser(t).authorize({ client_id: client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid", state: "s1" });
    await t.inst.db.execute(sql`ALTER TABLE auth_requests RENAME TO auth_requests_gone`);
    try {
      const res = await new Browser(t).authorize({
        client_id: client.id,
        redirect_uri: REDIRECT,
        response_type: "code",
        scope: "openid",
        state: "s2",
      });
      expect(res.status).toBe(302);
      const loc = new URL(res.headers.get("location")!);
      expect(loc.origin + loc.pathname).toBe(REDIRECT);
      expect(loc.searchParams.get("error")).toBe("server_error");
      expect(loc.searchParams.get("state")).toBe("s2");
      expect(loc.searchParams.get("error_description")).not.toMatch(/auth_requests|relation|stack|at /i);
    } finally {
      await t.inst.db.execute(sql`ALTER TABLE auth_requests_gone RENAME TO auth_requests`);
    }
  });
});
