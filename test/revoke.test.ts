import { sql } from "drizzle-orm";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "@/lib/db/client";
import { startTestInstance, type TestInstance } from "./harness";
import { introspect, issueTokens, keyClient, refresh, revoke } from "./introspect-support";
import { basic, CHALLENGE, makeClient, makeCode, makeUser, token, VERIFIER } from "./token-support";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const active = async (tokenValue: string, auth: string) => (await introspect(t, tokenValue, auth)).body.active === true;

async function auditActions(targetId: string): Promise<{ action: string; actor_id: string; client_id: string }[]> {
  return resultRows(await t.inst.db.execute(sql`SELECT action, actor_id, client_id FROM audit_events WHERE target_id = ${targetId} ORDER BY id`));
}

function expectEmpty200(r: { status: number; text: string; res: Response }) {
  expect(r.status).toBe(200);
  expect(r.text).toBe("");
  expect(r.res.headers.get("cache-control")).toBe("no-store");
}

describe("revoking an access token revokes only that token", () => {
  for (const format of ["jwt", "opaque"] as const) {
    it(`${format}: the token goes inactive; the refresh token and a later access token of the same grant stay good`, async () => {
      const i = await issueTokens(t, { clientPatch: { accessTokenType: format } });
      const r1 = await refresh(t, i.refresh!, i.auth);
      expect(r1.status).toBe(200);
      const laterAccess = r1.body.access_token as string;

      const jti = (await introspect(t, i.access, i.auth)).body.jti as string;
      expectEmpty200(await revoke(t, i.access, i.auth));
      expect(await active(i.access, i.auth)).toBe(false);
      expect(await active(laterAccess, i.auth)).toBe(true);
      const r2 = await refresh(t, r1.body.refresh_token, i.auth);
      expect(r2.status).toBe(200);

      if (format === "jwt") expect(jti).toBe(decodeJwt(i.access).jti);
      const audit = await auditActions(jti);
      expect(audit.map((a) => a.action)).toEqual(["token.revoked"]);
      expect(audit[0]).toMatchObject({ actor_id: i.client.id, client_id: i.client.id });
    });
  }
});

describe("revoking a refresh token", () => {
  for (const format of ["jwt", "opaque"] as const) {
    it(`${format}: also revokes the access tokens issued with it and its rotation family`, async () => {
      const i = await issueTokens(t, { clientPatch: { accessTokenType: format } });
      const r1 = await refresh(t, i.refresh!, i.auth);
      expect(r1.status).toBe(200);
      expectEmpty200(await revoke(t, r1.body.refresh_token, i.auth, { token_type_hint: "refresh_token" }));
      expect(await active(i.access, i.auth)).toBe(false);
      expect(await active(r1.body.access_token, i.auth)).toBe(false);
      const again = await refresh(t, r1.body.refresh_token, i.auth);
      expect(again.status).toBe(400);
      expect(again.body.error).toBe("invalid_grant");
    });
  }

  it("revoking an already rotated refresh token of the family ends the family too", async () => {
    const i = await issueTokens(t);
    const r1 = await refresh(t, i.refresh!, i.auth);
    expectEmpty200(await revoke(t, i.refresh!, i.auth));
    expect((await refresh(t, r1.body.refresh_token, i.auth)).body.error).toBe("invalid_grant");
    expect(await active(r1.body.access_token, i.auth)).toBe(false);
  });

  it("records a refresh_family.revoked audit event by the client", async () => {
    const i = await issueTokens(t);
    await revoke(t, i.refresh!, i.auth);
    const rows = resultRows<{ action: string; actor_id: string; client_id: string; target_id: string }>(
      await t.inst.db.execute(
        sql`SELECT action, actor_id, client_id, target_id FROM audit_events WHERE action = 'refresh_family.revoked' AND client_id = ${i.client.id}`,
      ),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor_id: i.client.id, client_id: i.client.id });
  });
});

describe("token_type_hint is only a hint", () => {
  it("a wrong or unknown hint does not stop the revocation", async () => {
    const a = await issueTokens(t);
    expectEmpty200(await revoke(t, a.refresh!, a.auth, { token_type_hint: "access_token" }));
    expect((await refresh(t, a.refresh!, a.auth)).body.error).toBe("invalid_grant");

    const b = await issueTokens(t);
    expectEmpty200(await revoke(t, b.access, b.auth, { token_type_hint: "refresh_token" }));
    expect(await active(b.access, b.auth)).toBe(false);

    const c = await issueTokens(t, { clientPatch: { accessTokenType: "opaque" } });
    expectEmpty200(await revoke(t, c.access, c.auth, { token_type_hint: "something_else" }));
    expect(await active(c.access, c.auth)).toBe(false);
  });
});

describe("a client revokes only its own tokens", () => {
  it("another client's access and refresh tokens: 200 and nothing happens", async () => {
    const victim = await issueTokens(t);
    const opaque = await issueTokens(t, { clientPatch: { accessTokenType: "opaque" } });
    const other = await makeClient(t);
    const otherAuth = basic(other.client.id, other.secret!);
    for (const v of [victim.access, victim.refresh!, opaque.access]) expectEmpty200(await revoke(t, v, otherAuth));
    expect(await active(victim.access, victim.auth)).toBe(true);
    expect(await active(opaque.access, opaque.auth)).toBe(true);
    expect((await refresh(t, victim.refresh!, victim.auth)).status).toBe(200);
    const events = resultRows(await t.inst.db.execute(sql`SELECT 1 FROM audit_events WHERE actor_id = ${other.client.id}`));
    expect(events).toHaveLength(0);
  });

  it("unknown and already revoked tokens answer 200", async () => {
    const i = await issueTokens(t);
    expectEmpty200(await revoke(t, "no-such-token", i.auth));
    expectEmpty200(await revoke(t, "a.b.c", i.auth));
    expectEmpty200(await revoke(t, i.access, i.auth));
    expectEmpty200(await revoke(t, i.access, i.auth));
  });
});

describe("revocation client authentication: all four methods", () => {
  it("client_secret_post", async () => {
    const { client, secret } = await makeClient(t, { authMethod: "client_secret_post", accessTokenType: "opaque" });
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client, user });
    const creds = { client_id: client.id, client_secret: secret! };
    const tr = await token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb", ...creds });
    expect(tr.status).toBe(200);
    // Introspection takes no client_secret_post (spec 5): userinfo tells whether the token still works.
    const userinfo = () => fetch(t.baseUrl + "/oidc/v1/userinfo", { headers: { authorization: `Bearer ${tr.body.access_token}` } });
    expect((await userinfo()).status).toBe(200);
    expectEmpty200(await revoke(t, tr.body.access_token, undefined, creds));
    expect((await userinfo()).status).toBe(401);
  });

  it("none (public client, client_id only)", async () => {
    const { client } = await makeClient(t, { authMethod: "none" });
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client, user, challenge: CHALLENGE, scopes: ["openid", "offline_access"] });
    const tr = await token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb", client_id: client.id, code_verifier: VERIFIER });
    expect(tr.status).toBe(200);
    expectEmpty200(await revoke(t, tr.body.refresh_token, undefined, { client_id: client.id }));
    const again = await token(t, { grant_type: "refresh_token", refresh_token: tr.body.refresh_token, client_id: client.id });
    expect(again.body.error).toBe("invalid_grant");
  });

  it("private_key_jwt", async () => {
    const k = await keyClient(t, { accessTokenType: "opaque" });
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client: k.client, user });
    const tr = await token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb", ...(await k.fields()) });
    expect(tr.status).toBe(200);
    expect((await introspect(t, tr.body.access_token, undefined, await k.fields())).body.active).toBe(true);
    expectEmpty200(await revoke(t, tr.body.access_token, undefined, await k.fields(`${t.issuer}/oauth/v2/revoke`)));
    expect((await introspect(t, tr.body.access_token, undefined, await k.fields())).body.active).toBe(false);
  });

  it("client_secret_basic failures and missing authentication are 401 invalid_client; nothing is revoked", async () => {
    const i = await issueTokens(t);
    for (const r of [await revoke(t, i.access, basic(i.client.id, "wrong")), await revoke(t, i.access), await revoke(t, i.access, basic("nobody", "x"))]) {
      expect(r.status).toBe(401);
      expect(r.body.error).toBe("invalid_client");
    }
    // A client registered for basic may not switch to the body.
    const post = await revoke(t, i.access, undefined, { client_id: i.client.id, client_secret: i.secret! });
    expect(post.status).toBe(401);
    expect(await active(i.access, i.auth)).toBe(true);
  });

  it("a missing token is invalid_request and GET is refused", async () => {
    const i = await issueTokens(t);
    const r = await fetch(t.baseUrl + "/oauth/v2/revoke", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", authorization: i.auth }, body: "" });
    expect(r.status).toBe(400);
    expect((await r.json()).error).toBe("invalid_request");
    expect((await fetch(t.baseUrl + "/oauth/v2/revoke", { headers: { authorization: i.auth } })).status).toBe(405);
  });
});
