/**
 * A code's redemption reads nothing on the instance that issued it: the authorization endpoint
 * remembered what the redemption's read would give (Store.codeRedemptions), and marking the code
 * used checks in the database whatever of that can have changed (lib/store/codes.ts
 * markCodeUsedWrite). Each case below gets a code from the authorization endpoint with a signed-in
 * browser, changes the database the way another instance, a logout or an administrator would,
 * then redeems it.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "@/lib/db/client";
import { sha256 } from "@/lib/crypto";
import { markCodeUsedWrite } from "@/lib/store/codes";
import type { NewClient } from "@/lib/store/clients";
import { createUserAgent, recordAuthentication } from "@/lib/store/sessions";
import { startTestInstance, type TestInstance } from "./harness";
import { indexLookup, planWithoutScans } from "./query-plan";
import { basic, CHALLENGE, makeClient, makeUser, token, verify, VERIFIER } from "./token-support";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const REDIRECT = "https://rp.example/cb";

/** A code from the authorization endpoint, for a browser signed in as a new user. */
async function authorized(o: Partial<NewClient> = {}, scope = "openid profile offline_access") {
  const { client, secret } = await makeClient(t, o);
  const user = await makeUser(t);
  const ua = await createUserAgent(t.inst.db);
  const session = await recordAuthentication(t.inst.db, { userAgentId: ua.id, userId: user.id, amr: ["pwd"], lifetimes: { sessionIdle: 3600, sessionAbsolute: 7200 }, now: new Date(), from: {} });
  const query = new URLSearchParams({ client_id: client.id, redirect_uri: REDIRECT, response_type: "code", scope, nonce: "n-1", code_challenge: CHALLENGE, code_challenge_method: "S256" });
  const res = await fetch(`${t.baseUrl}/oauth/v2/authorize?${query}`, { headers: { cookie: `torii_ua=${ua.cookie}` }, redirect: "manual" });
  expect(res.status).toBe(302);
  const code = new URL(res.headers.get("location")!).searchParams.get("code");
  expect(code).toBeTruthy();
  const redeem = (c: { id: string; secret: string } = { id: client.id, secret: secret! }) =>
    token(t, { grant_type: "authorization_code", code: code!, redirect_uri: REDIRECT, code_verifier: VERIFIER }, { auth: basic(c.id, c.secret) });
  return { client, secret: secret!, user, sessionId: session.id, code: code!, redeem };
}

async function usedAt(code: string): Promise<Date | null | undefined> {
  const rows = resultRows<{ used_at: Date | null }>(await t.inst.db.execute(sql`SELECT used_at FROM authorization_codes WHERE code_hash = ${sha256(code)}`));
  return rows[0]?.used_at;
}

/** The user's `updated_at` as the `updated_at` claim gives it (OIDC Core 5.1: seconds). */
async function updatedAtSeconds(userId: string): Promise<number> {
  const rows = resultRows<{ s: number | string }>(await t.inst.db.execute(sql`SELECT floor(extract(epoch FROM updated_at))::int AS s FROM users WHERE id = ${userId}`));
  return Number(rows[0]!.s);
}

async function grantRevoked(code: string): Promise<boolean> {
  const rows = resultRows<{ revoked: boolean }>(
    await t.inst.db.execute(sql`SELECT g.revoked_at IS NOT NULL AS revoked FROM grants g JOIN authorization_codes c ON c.grant_id = g.id WHERE c.code_hash = ${sha256(code)}`),
  );
  return rows[0]!.revoked;
}

describe("authorization_code grant: a code this instance remembered", () => {
  it("is redeemed from memory with the tokens the request asked for, once", async () => {
    const { client, secret, user, code, redeem } = await authorized();
    const r = await redeem();
    expect(r.status).toBe(200);
    expect(r.body.refresh_token).toBeTruthy();
    const id = (await verify(t, r.body.id_token)).payload;
    expect(id).toMatchObject({ sub: user.id, nonce: "n-1", amr: ["pwd"] });
    expect(await usedAt(code)).toBeTruthy();
    // RFC 6749 4.1.2: presented again, it is refused and what it produced is revoked.
    const again = await redeem();
    expect(again.status).toBe(400);
    expect(again.body.error).toBe("invalid_grant");
    expect(await grantRevoked(code)).toBe(true);
    const refreshed = await token(t, { grant_type: "refresh_token", refresh_token: r.body.refresh_token }, { auth: basic(client.id, secret) });
    expect(refreshed.body.error).toBe("invalid_grant");
  });

  it("checks redirect_uri and the PKCE verifier as for a code it reads, and the refresh token needs offline_access", async () => {
    // Spec 4.3.1: redirect_uri must exactly equal the authorization request's; RFC 7636 4.6: the
    // verifier of the challenge sent. Each on a code of its own, so that memory answers it.
    for (const wrong of [{ redirect_uri: `${REDIRECT}/other` }, { code_verifier: "w".repeat(43) }]) {
      const { client, secret, code, redeem } = await authorized({}, "openid profile");
      const refused = await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: VERIFIER, ...wrong }, { auth: basic(client.id, secret) });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe("invalid_grant");
      expect(await usedAt(code)).toBeNull();
      // Spec 4.3.1: a refresh token only when offline_access was requested.
      const r = await redeem();
      expect(r.status).toBe(200);
      expect(r.body.id_token).toBeTruthy();
      expect(r.body.refresh_token).toBeUndefined();
    }
  });

  it("is won by exactly one of concurrent redemptions", async () => {
    const { redeem } = await authorized();
    const all = await Promise.all([redeem(), redeem(), redeem()]);
    expect(all.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of all.filter((x) => x.status !== 200)) expect(r.body.error).toBe("invalid_grant");
  });

  it("is refused, and stays unused, once its grant was revoked in the database by anyone", async () => {
    const { code, redeem } = await authorized();
    // Not through this engine: nothing in its memory learns of it.
    await t.inst.db.execute(sql`UPDATE grants SET revoked_at = now() FROM authorization_codes c WHERE c.grant_id = grants.id AND c.code_hash = ${sha256(code)}`);
    const r = await redeem();
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_grant");
    expect(await usedAt(code)).toBeNull();
  });

  it("is refused once its session has ended, or it expired", async () => {
    for (const change of ["session", "expiry"] as const) {
      const { code, sessionId, redeem } = await authorized();
      await t.inst.db.execute(
        change === "session"
          ? sql`UPDATE sessions SET ended_at = now() WHERE id = ${sessionId}`
          : sql`UPDATE authorization_codes SET expires_at = now() - interval '1 second' WHERE code_hash = ${sha256(code)}`,
      );
      const r = await redeem();
      expect(r.status, change).toBe(400);
      expect(r.body.error).toBe("invalid_grant");
      expect(await usedAt(code)).toBeNull();
    }
  });

  it("is refused once its user is locked", async () => {
    const { user, redeem } = await authorized();
    const locked = await t.api(`/management/v1/users/${user.id}`, { method: "PATCH", json: { locked: true } });
    expect(locked.status).toBe(200);
    const r = await redeem();
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_grant");
  });

  it("carries the user's claims as they are at the redemption, not as they were at the authorization", async () => {
    // A client that takes the user's claims in the ID token even with an access token.
    const { user, redeem } = await authorized({ idTokenUserinfoAssertion: true });
    const renamed = await t.api(`/management/v1/users/${user.id}`, { method: "PATCH", json: { givenName: "Renamed" } });
    expect(renamed.status).toBe(200);
    const r = await redeem();
    expect(r.status).toBe(200);
    expect((await verify(t, r.body.id_token)).payload.name).toBe("Renamed Doe");
  });

  it("is not answered from memory for another client, and the right client redeems it after", async () => {
    const a = await authorized();
    const b = await makeClient(t);
    const wrong = await a.redeem({ id: b.client.id, secret: b.secret! });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    const right = await a.redeem();
    expect(right.status).toBe(200);
  });

  it("remembers the refresh token it gives for its first rotation, which answers as a fresh read would", async () => {
    // User claims in the ID token and a narrower scope at the refresh, so that what the rotation
    // carries over from the family, the grant and the user is all in the answer.
    const answers = [];
    for (const remembered of [true, false]) {
      const { client, secret, user, redeem } = await authorized({ idTokenUserinfoAssertion: true });
      const issued = await redeem();
      expect(issued.status).toBe(200);
      // Forgotten, as on an instance that did not issue it: the rotation reads it.
      if (!remembered) expect(await t.inst.store.issuedRefreshTokens.take(issued.body.refresh_token)).toBeDefined();
      const r = await token(t, { grant_type: "refresh_token", refresh_token: issued.body.refresh_token, scope: "openid profile" }, { auth: basic(client.id, secret) });
      expect(r.status).toBe(200);
      const id = (await verify(t, r.body.id_token)).payload;
      const at = (await verify(t, r.body.access_token)).payload;
      const first = (await verify(t, issued.body.id_token)).payload;
      expect(id.sid).toBe(first.sid);
      expect(id.auth_time).toBe(first.auth_time);
      // Each pass has a user of its own, created a moment apart (their seconds can differ): the
      // claim is compared with that user's row, the rest of the answers with each other.
      expect(id.updated_at).toBe(await updatedAtSeconds(user.id));
      const drop = (p: Record<string, unknown>) => Object.fromEntries(Object.entries(p).filter(([k]) => !["iat", "exp", "nbf", "jti", "at_hash", "aud", "azp", "client_id", "sub", "sid", "gid", "auth_time", "preferred_username", "email", "updated_at"].includes(k)));
      answers.push({ id: drop(id), at: drop(at), scope: r.body.scope, refresh: typeof r.body.refresh_token });
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]!.scope).toBe("openid profile");
  });

  it("remembers its refresh token only as far as the database agrees: a revoked grant refuses it", async () => {
    const { client, secret, code, redeem } = await authorized();
    const issued = await redeem();
    await t.inst.db.execute(sql`UPDATE grants SET revoked_at = now() FROM authorization_codes c WHERE c.grant_id = grants.id AND c.code_hash = ${sha256(code)}`);
    const r = await token(t, { grant_type: "refresh_token", refresh_token: issued.body.refresh_token }, { auth: basic(client.id, secret) });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_grant");
    const rows = resultRows<{ rotated: boolean }>(await t.inst.db.execute(sql`SELECT rotated_at IS NOT NULL AS rotated FROM tokens WHERE token_hash = ${sha256(issued.body.refresh_token as string)}`));
    expect(rows).toEqual([{ rotated: false }]);
  });

  it("compares the user's version only for a read from memory, so a fresh read never loses to a profile change", async () => {
    const { code, user } = await authorized();
    const found = await t.inst.store.codes.findForRedemption(code);
    await t.inst.db.execute(sql`UPDATE users SET updated_at = now() + interval '1 second' WHERE id = ${user.id}`);
    const codeHash = sha256(code);
    expect(await t.inst.store.codes.markUsed({ codeHash, userVersion: found!.user!.updatedAt })).toBe(false);
    expect(await usedAt(code)).toBeNull();
    expect(await t.inst.store.codes.markUsed({ codeHash, userVersion: null })).toBe(true);
  });

  it("finds the code by its hash and checks its grant, user and session by their keys, not by scanning", async () => {
    const { code, user } = await authorized();
    const guard = markCodeUsedWrite(t.inst.db, { codeHash: sha256(code), userVersion: user.updatedAt }, new Date()).guard;
    const plan = await planWithoutScans(t.inst.db, guard);
    expect(plan).not.toMatch(/Seq Scan/);
    expect(plan).toMatch(indexLookup("code_hash"));
    for (const key of ["grant_id", "user_id", "session_id"]) expect(plan).toMatch(indexLookup("id", `authorization_codes.${key}`));
  });
});
