import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grantConsent } from "@/lib/store/consents";
import { startTestInstance, type TestInstance } from "./harness";
import { basic, CHALLENGE, makeClient, makeCode, makeUser, token, VERIFIER } from "./token-support";

// Consents through the management API (the browser side is e2e/consent.spec.ts).
let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

describe("consents", () => {
  it("clients are first-party unless registered otherwise; firstParty is a boolean", async () => {
    const created = await t.api("/management/v1/clients", { method: "POST", json: { name: "a", redirectUris: ["https://a.example/cb"] } });
    expect((await created.json()).firstParty).toBe(true);
    const third = await t.api("/management/v1/clients", { method: "POST", json: { name: "b", redirectUris: ["https://b.example/cb"], firstParty: false } });
    expect((await third.json()).firstParty).toBe(false);
    const bad = await t.api("/management/v1/clients", { method: "POST", json: { name: "c", redirectUris: ["https://c.example/cb"], firstParty: "no" } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).fields[0].path).toBe("firstParty");
  });

  it("an administrator lists a user's consents and withdraws one: the client's tokens for that user stop working, others' do not", async () => {
    const { client, secret } = await makeClient(t, { firstParty: false });
    const user = await makeUser(t);
    const other = await makeUser(t);
    const issue = async (u: typeof user) => {
      await grantConsent(t.inst.db, u.id, client.id, { scopes: ["openid", "profile", "offline_access"], apis: {} }, new Date());
      const { code } = await makeCode(t, { client, user: u, scopes: ["openid", "offline_access"], challenge: CHALLENGE });
      const r = await token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb", code_verifier: VERIFIER }, { auth: basic(client.id, secret!) });
      expect(r.status).toBe(200);
      return r.body as { access_token: string; refresh_token: string };
    };
    const mine = await issue(user);
    const theirs = await issue(other);

    const list = await t.api(`/management/v1/users/${user.id}/consents`);
    expect(list.status).toBe(200);
    expect((await list.json()).consents).toEqual([
      { clientId: client.id, clientName: client.name, scopes: ["offline_access", "openid", "profile"], apis: {}, grantedAt: expect.any(String) },
    ]);

    const introspect = async (at: string) =>
      (
        await fetch(t.baseUrl + "/oauth/v2/introspect", {
          method: "POST",
          headers: { authorization: basic(client.id, secret!), "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ token: at }).toString(),
        })
      ).json() as Promise<{ active: boolean }>;
    expect((await introspect(mine.access_token)).active).toBe(true); // now remembered for a few seconds

    expect((await t.api(`/management/v1/users/${user.id}/consents/${client.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await (await t.api(`/management/v1/users/${user.id}/consents`)).json()).consents).toEqual([]);
    // At once, although introspection had just seen the token active.
    expect((await introspect(mine.access_token)).active).toBe(false);
    const refreshed = await token(t, { grant_type: "refresh_token", refresh_token: mine.refresh_token }, { auth: basic(client.id, secret!) });
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe("invalid_grant");
    // The other user's consent and tokens are untouched.
    expect((await introspect(theirs.access_token)).active).toBe(true);
    const theirRefresh = await token(t, { grant_type: "refresh_token", refresh_token: theirs.refresh_token }, { auth: basic(client.id, secret!) });
    expect(theirRefresh.status).toBe(200);

    // Withdrawing again, or for an unknown user: 404.
    expect((await t.api(`/management/v1/users/${user.id}/consents/${client.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await t.api(`/management/v1/users/nobody/consents/${client.id}`, { method: "DELETE" })).status).toBe(404);
  });
});
