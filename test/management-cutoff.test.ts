import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyOwnJwt } from "@/lib/oauth/tokens";
import { startTestInstance, type TestInstance } from "./harness";
import { basic, makeClient, makeCode, makeSession, makeUser, token } from "./token-support";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const env = () => t.inst;

/** A user signed in through a session, holding an access and a refresh token from a code exchange. */
async function signedInUser() {
  const { client, secret } = await makeClient(t, {
    grantTypes: ["authorization_code", "refresh_token"],
    accessTokenType: "jwt",
  });
  const user = await makeUser(t);
  const sessionId = await makeSession(t, user.id);
  const { code } = await makeCode(t, { client, user, sessionId, scopes: ["openid", "offline_access"] });
  const r = await token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb" }, { auth: basic(client.id, secret!) });
  expect(r.status).toBe(200);
  return { client, secret: secret!, user, access: r.body.access_token as string, refresh: r.body.refresh_token as string };
}

describe("cutting off users and clients", () => {
  it("locking a user revokes their tokens and refresh tokens", async () => {
    const s = await signedInUser();
    expect(await verifyOwnJwt(env(), s.access, "at+jwt")).toBeTruthy();
    const res = await t.api(`/management/v1/users/${s.user.id}`, { method: "PATCH", json: { locked: true } });
    expect(res.status).toBe(200);
    expect(await verifyOwnJwt(env(), s.access, "at+jwt")).toBeUndefined();
    const r = await token(t, { grant_type: "refresh_token", refresh_token: s.refresh }, { auth: basic(s.client.id, s.secret) });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_grant");
  });

  it("deleting a user revokes their tokens", async () => {
    const s = await signedInUser();
    expect((await t.api(`/management/v1/users/${s.user.id}`, { method: "DELETE" })).status).toBe(204);
    expect(await verifyOwnJwt(env(), s.access, "at+jwt")).toBeUndefined();
  });

  it("deleting a client revokes what it was issued", async () => {
    const s = await signedInUser();
    expect((await t.api(`/management/v1/clients/${s.client.id}`, { method: "DELETE" })).status).toBe(204);
    expect(await verifyOwnJwt(env(), s.access, "at+jwt")).toBeUndefined();
  });
});

describe("the last administrator", () => {
  async function admin() {
    const users = await (await t.api("/management/v1/users?search=admin")).json();
    return users.users.find((u: { username: string }) => u.username === "admin");
  }

  it("cannot be deleted, locked or demoted while no other unlocked administrator exists", async () => {
    const a = await admin();
    for (const [method, json] of [
      ["DELETE", undefined],
      ["PATCH", { locked: true }],
      ["PATCH", { roles: [] }],
    ] as const) {
      const res = await t.api(`/management/v1/users/${a.id}`, { method, json });
      expect(res.status).toBe(409);
      const body = await res.json();
      expect(body.message).toMatch(/last unlocked administrator/);
      expect(body.fields).toEqual([{ path: "", code: "last_admin", message: body.message }]);
    }
    expect((await t.api("/management/v1/features")).status).toBe(200);
  });

  it("can be demoted once another administrator exists", async () => {
    const other = await makeUser(t, { roles: ["admin"] });
    const a = await admin();
    const res = await t.api(`/management/v1/users/${a.id}`, { method: "PATCH", json: { roles: ["impersonation"] } });
    expect(res.status).toBe(200);
    // Undo, so that the bootstrap PAT keeps its rights for the other tests.
    expect((await t.api(`/management/v1/users/${a.id}`, { method: "PATCH", json: { roles: ["admin"] } })).status).toBe(403);
    expect(other.roles).toContain("admin");
  });
});
