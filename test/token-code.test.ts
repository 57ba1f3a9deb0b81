import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "@/lib/db/client";
import { isAccessTokenRevoked } from "@/lib/store/tokens";
import { startTestInstance, type TestInstance } from "./harness";
import { basic, CHALLENGE, expectNoStore, makeClient, makeCode, makeSession, makeUser, token, verify, VERIFIER, liveGrantRows } from "./token-support";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const half = (v: string) => createHash("sha256").update(v).digest().subarray(0, 16).toString("base64url");
const REDIRECT = "https://rp.example/cb";

describe("authorization_code grant", () => {
  it("returns access and ID tokens with the specified claims, and no refresh token without offline_access", async () => {
    const { client, secret } = await makeClient(t);
    const user = await makeUser(t);
    const sid = await makeSession(t, user.id);
    const { code, grantId } = await makeCode(t, { client, user, sessionId: sid });
    const r = await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT }, { auth: basic(client.id, secret!) });
    expect(r.status).toBe(200);
    expectNoStore(r.res);
    expect(r.body).toMatchObject({ token_type: "Bearer", expires_in: 900, scope: "openid profile email" });
    expect(r.body.refresh_token).toBeUndefined();

    const at = (await verify(t, r.body.access_token)).payload;
    expect(at).toMatchObject({ iss: t.issuer, sub: user.id, aud: client.id, client_id: client.id, scope: "openid profile email", sid, gid: grantId });
    for (const c of ["exp", "iat", "nbf", "jti"]) expect(at[c]).toBeDefined();

    const { payload: id, header } = await verify(t, r.body.id_token);
    expect(header.alg).toBe("RS256");
    expect(id).toMatchObject({ iss: t.issuer, sub: user.id, aud: client.id, azp: client.id, nonce: "n-0S6_WzA2Mj", sid, amr: ["pwd"] });
    expect(id.at_hash).toBe(half(r.body.access_token));
    expect(typeof id.auth_time).toBe("number");
    expect(id.exp! - id.iat!).toBe(600);
    // Spec 2.1: an access token goes along, so the profile and email claims stay out of the ID token.
    for (const c of ["email", "email_verified", "name", "given_name", "preferred_username", "updated_at"]) expect(id[c]).toBeUndefined();
  });

  it("puts the scope claims into the ID token when the client asked for User Info inside ID Token", async () => {
    const { client, secret } = await makeClient(t, { idTokenUserinfoAssertion: true });
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client, user, scopes: ["openid", "profile", "email", "phone", "address"] });
    const r = await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT }, { auth: basic(client.id, secret!) });
    const id = (await verify(t, r.body.id_token)).payload;
    expect(id).toMatchObject({
      email: "jane@example.com",
      email_verified: true,
      given_name: "Jane",
      family_name: "Doe",
      name: "Jane Doe",
      phone_number: "+41 44 000 00 00",
      phone_number_verified: false,
      address: { street_address: "Main St 1", locality: "Zurich", postal_code: "8000", country: "CH" },
    });
    expect(id.preferred_username).toMatch(new RegExp(`^${user.username}@`));
  });

  it("returns a refresh token when offline_access was granted", async () => {
    const { client, secret } = await makeClient(t);
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client, user, scopes: ["openid", "offline_access"] });
    const r = await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT }, { auth: basic(client.id, secret!) });
    expect(r.status).toBe(200);
    expect(typeof r.body.refresh_token).toBe("string");
  });

  it("issues opaque access tokens to clients registered for them", async () => {
    const { client, secret } = await makeClient(t, { accessTokenType: "opaque" });
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client, user });
    const r = await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT }, { auth: basic(client.id, secret!) });
    expect(r.status).toBe(200);
    expect(r.body.access_token.split(".")).toHaveLength(1);
    expect((await verify(t, r.body.id_token)).payload.at_hash).toBe(half(r.body.access_token));
  });

  it("requires the exact redirect_uri of the authorization request", async () => {
    const { client, secret } = await makeClient(t);
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client, user });
    for (const redirect_uri of [REDIRECT + "/", "https://rp.example/CB", REDIRECT + "?x=1"]) {
      const r = await token(t, { grant_type: "authorization_code", code, redirect_uri }, { auth: basic(client.id, secret!) });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_grant");
    }
    const missing = await token(t, { grant_type: "authorization_code", code }, { auth: basic(client.id, secret!) });
    expect(missing.body.error).toBe("invalid_request");
    const ok = await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT }, { auth: basic(client.id, secret!) });
    expect(ok.status).toBe(200);
  });

  it("refuses a code issued to another client, an unknown code and an expired code", async () => {
    const a = await makeClient(t);
    const b = await makeClient(t);
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client: a.client, user });
    const other = await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT }, { auth: basic(b.client.id, b.secret!) });
    expect(other.body.error).toBe("invalid_grant");
    const unknown = await token(t, { grant_type: "authorization_code", code: "nope", redirect_uri: REDIRECT }, { auth: basic(a.client.id, a.secret!) });
    expect(unknown.body.error).toBe("invalid_grant");
    const expired = await makeCode(t, { client: a.client, user, lifetimeSeconds: -1 });
    const late = await token(t, { grant_type: "authorization_code", code: expired.code, redirect_uri: REDIRECT }, { auth: basic(a.client.id, a.secret!) });
    expect(late.status).toBe(400);
    expect(late.body.error).toBe("invalid_grant");
  });

  it("verifies PKCE S256 for a public client (method none)", async () => {
    const { client } = await makeClient(t, { authMethod: "none" });
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client, user, challenge: CHALLENGE });
    const base = { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.id };
    expect((await token(t, base)).body.error).toBe("invalid_grant");
    expect((await token(t, { ...base, code_verifier: "w".repeat(43) })).body.error).toBe("invalid_grant");
    const ok = await token(t, { ...base, code_verifier: VERIFIER });
    expect(ok.status).toBe(200);
    expect((await verify(t, ok.body.id_token)).payload.aud).toBe(client.id);

    // Without a challenge at the authorization request, a public client gets nothing.
    const noPkce = await makeCode(t, { client, user });
    const r = await token(t, { ...base, code: noPkce.code, code_verifier: VERIFIER });
    expect(r.body.error).toBe("invalid_grant");
    const r2 = await token(t, { ...base, code: noPkce.code });
    expect(r2.body.error).toBe("invalid_grant");
  });

  it("verifies PKCE for a confidential client that used it", async () => {
    const { client, secret } = await makeClient(t, { authMethod: "client_secret_post" });
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client, user, challenge: CHALLENGE });
    const base = { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.id, client_secret: secret! };
    expect((await token(t, base)).body.error).toBe("invalid_grant");
    expect((await token(t, { ...base, code_verifier: VERIFIER })).status).toBe(200);
  });

  it("is single use: a replay is invalid_grant and revokes every token issued from the code", async () => {
    const { client, secret } = await makeClient(t, { accessTokenType: "opaque" });
    const user = await makeUser(t);
    const { code, grantId } = await makeCode(t, { client, user, scopes: ["openid", "offline_access"] });
    const params = { grant_type: "authorization_code", code, redirect_uri: REDIRECT };
    const first = await token(t, params, { auth: basic(client.id, secret!) });
    expect(first.status).toBe(200);
    // A refresh works before the replay.
    const refreshed = await token(t, { grant_type: "refresh_token", refresh_token: first.body.refresh_token }, { auth: basic(client.id, secret!) });
    expect(refreshed.status).toBe(200);

    const replay = await token(t, params, { auth: basic(client.id, secret!) });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_grant");

    // The grant and its refresh families are revoked, which ends every token they issued.
    expect(await liveGrantRows(t, grantId)).toBe(0);
    const again = await token(t, { grant_type: "refresh_token", refresh_token: refreshed.body.refresh_token }, { auth: basic(client.id, secret!) });
    expect(again.body.error).toBe("invalid_grant");
    const audit = resultRows<{ action: string }>(
      await t.inst.db.execute(sql`SELECT action FROM audit_events WHERE target_id = ${grantId} AND action = 'grant.revoked'`),
    );
    expect(audit).toHaveLength(1);
  });

  it("revokes the JWT access tokens of a replayed code (by grant)", async () => {
    const { client, secret } = await makeClient(t);
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client, user });
    const params = { grant_type: "authorization_code", code, redirect_uri: REDIRECT };
    const first = await token(t, params, { auth: basic(client.id, secret!) });
    const at = (await verify(t, first.body.access_token)).payload;
    const check = { jti: at.jti, grantId: at.gid, sessionId: at.sid ?? null, iat: at.iat };
    expect(await isAccessTokenRevoked(t.inst.db, check)).toBe(false);
    expect((await token(t, params, { auth: basic(client.id, secret!) })).body.error).toBe("invalid_grant");
    expect(await isAccessTokenRevoked(t.inst.db, check)).toBe(true);
  });

  it("refuses a code whose session has ended", async () => {
    const { client, secret } = await makeClient(t);
    const user = await makeUser(t);
    const sid = await makeSession(t, user.id);
    const { code } = await makeCode(t, { client, user, sessionId: sid });
    await t.inst.db.execute(sql`UPDATE sessions SET ended_at = now() WHERE id = ${sid}`);
    const r = await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT }, { auth: basic(client.id, secret!) });
    expect(r.body.error).toBe("invalid_grant");
  });

  // The code is read joined with its grant; a grant that is gone must come back as nothing (not as
  // an object of empty columns, which would read as "not revoked"), and one revoked must refuse.
  it("refuses a code whose grant was revoked or no longer exists, and leaves the code unused", async () => {
    for (const change of ["revoke", "delete"] as const) {
      const { client, secret } = await makeClient(t);
      const user = await makeUser(t);
      const { code, grantId } = await makeCode(t, { client, user, sessionId: await makeSession(t, user.id) });
      const changed = resultRows<{ id: string }>(
        await t.inst.db.execute(
          change === "revoke" ? sql`UPDATE grants SET revoked_at = now() WHERE id = ${grantId} RETURNING id` : sql`DELETE FROM grants WHERE id = ${grantId} RETURNING id`,
        ),
      );
      expect(changed).toHaveLength(1);
      const r = await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT }, { auth: basic(client.id, secret!) });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_grant");
      const used = resultRows<{ used_at: Date | null }>(await t.inst.db.execute(sql`SELECT used_at FROM authorization_codes WHERE grant_id = ${grantId}`));
      expect(used).toEqual([{ used_at: null }]);
    }
  });
});
