import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "@/lib/crypto";
import { resultRows } from "@/lib/db/client";
import { isAccessTokenRevoked, markRotatedWrite } from "@/lib/store/tokens";
import { startTestInstance, type TestInstance } from "./harness";
import { indexLookup, planWithoutScans } from "./query-plan";
import { basic, CHALLENGE, expectNoStore, makeClient, makeCode, makeSession, makeUser, token, verify, VERIFIER, liveGrantRows } from "./token-support";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

/** When the stored refresh token with this value was rotated: null when not yet, undefined when no such token is stored. */
const rotatedAt = async (value: string): Promise<Date | null | undefined> =>
  resultRows<{ rotated_at: Date | null }>(await t.inst.db.execute(sql`SELECT rotated_at FROM tokens WHERE token_hash = ${sha256(value)}`))[0]?.rotated_at;

const REDIRECT = "https://rp.example/cb";
const SCOPES = ["openid", "profile", "email", "offline_access"];

async function start(o: Parameters<typeof makeClient>[1] = {}) {
  const { client, secret } = await makeClient(t, o);
  const user = await makeUser(t);
  const sid = await makeSession(t, user.id);
  const { code, grantId } = await makeCode(t, { client, user, scopes: SCOPES, sessionId: sid });
  const r = await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT }, { auth: basic(client.id, secret!) });
  expect(r.status).toBe(200);
  return { client, secret: secret!, user, sid, grantId, first: r.body };
}

describe("refresh_token grant", () => {
  it("rotates: returns a new refresh token, a new access token and a new ID token; the used one stops working", async () => {
    const { client, secret, user, sid, first } = await start();
    const r = await token(t, { grant_type: "refresh_token", refresh_token: first.refresh_token }, { auth: basic(client.id, secret) });
    expect(r.status).toBe(200);
    expectNoStore(r.res);
    expect(r.body).toMatchObject({ token_type: "Bearer", expires_in: 900, scope: SCOPES.join(" ") });
    expect(r.body.refresh_token).toBeTruthy();
    expect(r.body.refresh_token).not.toBe(first.refresh_token);
    expect(r.body.access_token).not.toBe(first.access_token);
    const id = (await verify(t, r.body.id_token)).payload;
    expect(id).toMatchObject({ sub: user.id, aud: client.id, azp: client.id, sid });
    const next = await token(t, { grant_type: "refresh_token", refresh_token: r.body.refresh_token }, { auth: basic(client.id, secret) });
    expect(next.status).toBe(200);
    // A successor this instance remembered rotates the same way: a new refresh token again.
    expect(next.body.refresh_token).toBeTruthy();
    expect(next.body.refresh_token).not.toBe(r.body.refresh_token);
  });

  it("narrows to a subset of the original scopes and refuses more with invalid_scope", async () => {
    const { client, secret, first } = await start();
    const narrow = await token(t, { grant_type: "refresh_token", refresh_token: first.refresh_token, scope: "openid email" }, { auth: basic(client.id, secret) });
    expect(narrow.status).toBe(200);
    expect(narrow.body.scope).toBe("openid email");
    expect((await verify(t, narrow.body.access_token)).payload.scope).toBe("openid email");
    // The family keeps the original scopes: a later refresh may ask for all of them again.
    const full = await token(t, { grant_type: "refresh_token", refresh_token: narrow.body.refresh_token }, { auth: basic(client.id, secret) });
    expect(full.body.scope).toBe(SCOPES.join(" "));
    const wider = await token(t, { grant_type: "refresh_token", refresh_token: full.body.refresh_token, scope: "openid phone" }, { auth: basic(client.id, secret) });
    expect(wider.status).toBe(400);
    expect(wider.body.error).toBe("invalid_scope");
  });

  it("detects reuse of a rotated token and revokes the whole family and its access tokens", async () => {
    const { client, secret, grantId, first } = await start({ accessTokenType: "opaque" });
    const second = await token(t, { grant_type: "refresh_token", refresh_token: first.refresh_token }, { auth: basic(client.id, secret) });
    expect(second.status).toBe(200);
    const reuse = await token(t, { grant_type: "refresh_token", refresh_token: first.refresh_token }, { auth: basic(client.id, secret) });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe("invalid_grant");
    // The legitimate successor is gone too, and so are the opaque access tokens.
    const after = await token(t, { grant_type: "refresh_token", refresh_token: second.body.refresh_token }, { auth: basic(client.id, secret) });
    expect(after.body.error).toBe("invalid_grant");
    // The grant and its refresh families are revoked, which ends every token they issued.
    expect(await liveGrantRows(t, grantId)).toBe(0);
    const fam = resultRows<{ revoked_reason: string }>(await t.inst.db.execute(sql`SELECT revoked_reason FROM refresh_token_families WHERE grant_id = ${grantId}`));
    expect(fam).toEqual([{ revoked_reason: "refresh_reuse" }]);
  });

  it("revokes the JWT access tokens of a family on reuse", async () => {
    const { client, secret, first } = await start();
    const second = await token(t, { grant_type: "refresh_token", refresh_token: first.refresh_token }, { auth: basic(client.id, secret) });
    const at = (await verify(t, second.body.access_token)).payload;
    const check = { jti: at.jti, grantId: at.gid, sessionId: null, iat: at.iat };
    expect(await isAccessTokenRevoked(t.inst.db, check)).toBe(false);
    await token(t, { grant_type: "refresh_token", refresh_token: first.refresh_token }, { auth: basic(client.id, secret) });
    expect(await isAccessTokenRevoked(t.inst.db, check)).toBe(true);
  });

  it("refuses a refresh token of another client, an unknown token and an access token", async () => {
    const { first } = await start();
    const other = await makeClient(t);
    const r = await token(t, { grant_type: "refresh_token", refresh_token: first.refresh_token }, { auth: basic(other.client.id, other.secret!) });
    expect(r.body.error).toBe("invalid_grant");
    const { client, secret, first: opaque } = await start({ accessTokenType: "opaque" });
    expect((await token(t, { grant_type: "refresh_token", refresh_token: "x".repeat(43) }, { auth: basic(client.id, secret) })).body.error).toBe("invalid_grant");
    // An opaque access token sits in the same table as refresh tokens: only its kind tells them apart.
    for (const refresh_token of [opaque.access_token, first.access_token]) {
      const at = await token(t, { grant_type: "refresh_token", refresh_token }, { auth: basic(client.id, secret) });
      expect(at.status).toBe(400);
      expect(at.body.error).toBe("invalid_grant");
    }
    const missing = await token(t, { grant_type: "refresh_token" }, { auth: basic(client.id, secret) });
    expect(missing.body.error).toBe("invalid_request");
  });

  // The refresh grant reads the token joined with its family and grant; a row that is gone must
  // come back as nothing (not as an object of empty columns, which would read as "not revoked").
  it("refuses a refresh token whose grant or whose family no longer exists, and changes nothing", async () => {
    for (const table of ["grants", "refresh_token_families"] as const) {
      const { client, secret, grantId, first } = await start();
      const where = table === "grants" ? sql`id = ${grantId}` : sql`grant_id = ${grantId}`;
      const gone = resultRows<{ id: string }>(await t.inst.db.execute(sql`DELETE FROM ${sql.identifier(table)} WHERE ${where} RETURNING id`));
      expect(gone).toHaveLength(1);
      const r = await token(t, { grant_type: "refresh_token", refresh_token: first.refresh_token }, { auth: basic(client.id, secret) });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_grant");
      expect(await rotatedAt(first.refresh_token)).toBeNull();
    }
  });

  it("refuses an expired refresh token with invalid_grant", async () => {
    const { client, secret, first } = await start();
    const expired = resultRows<{ id: string }>(
      await t.inst.db.execute(sql`UPDATE tokens SET expires_at = now() - interval '1 second' WHERE token_hash = ${sha256(first.refresh_token)} RETURNING id`),
    );
    expect(expired).toHaveLength(1);
    const r = await token(t, { grant_type: "refresh_token", refresh_token: first.refresh_token }, { auth: basic(client.id, secret) });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_grant");
  });

  it("works for a public client with only client_id", async () => {
    const { client } = await makeClient(t, { authMethod: "none" });
    const user = await makeUser(t);
    const { code } = await makeCode(t, { client, user, scopes: SCOPES, challenge: CHALLENGE });
    const first = await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.id, code_verifier: VERIFIER });
    const r = await token(t, { grant_type: "refresh_token", refresh_token: first.body.refresh_token, client_id: client.id });
    expect(r.status).toBe(200);
    expect(r.body.refresh_token).toBeTruthy();
  });

  it("is unauthorized_client for a client not registered for the refresh grant", async () => {
    const { client, secret, first } = await start();
    await t.inst.db.execute(sql`UPDATE clients SET grant_types = ARRAY['authorization_code'] WHERE id = ${client.id}`);
    t.inst.caches.invalidate("clients", client.id);
    const r = await token(t, { grant_type: "refresh_token", refresh_token: first.refresh_token }, { auth: basic(client.id, secret) });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("unauthorized_client");
  });
});

/**
 * A successor's rotation reads nothing: the instance that issued it remembered what the read
 * would give (Store.issuedRefreshTokens), and the rotation's guard checks in the database whatever
 * of that can have changed (lib/store/tokens.ts markRotatedWrite). Each case below changes the
 * database after the first rotation, the way another instance or an administrator would, then
 * presents the remembered successor.
 */
describe("refresh_token grant: a successor this instance remembered", () => {
  async function rotatedOnce(o: Parameters<typeof makeClient>[1] = {}) {
    const s = await start(o);
    const second = await token(t, { grant_type: "refresh_token", refresh_token: s.first.refresh_token }, { auth: basic(s.client.id, s.secret) });
    expect(second.status).toBe(200);
    return { ...s, second: second.body };
  }

  it("is refused once its grant was revoked in the database by anyone, and stays unrotated", async () => {
    const { client, secret, grantId, second } = await rotatedOnce();
    // Not through this engine: nothing in its memory learns of it.
    await t.inst.db.execute(sql`UPDATE grants SET revoked_at = now() WHERE id = ${grantId}`);
    const r = await token(t, { grant_type: "refresh_token", refresh_token: second.refresh_token }, { auth: basic(client.id, secret) });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_grant");
    expect(await rotatedAt(second.refresh_token)).toBeNull();
  });

  it("is refused once its family was revoked, or it expired, in the database", async () => {
    for (const change of ["family", "expiry"] as const) {
      const { client, secret, grantId, second } = await rotatedOnce();
      await t.inst.db.execute(
        change === "family"
          ? sql`UPDATE refresh_token_families SET revoked_at = now(), revoked_reason = 'test' WHERE grant_id = ${grantId}`
          : sql`UPDATE tokens SET expires_at = now() - interval '1 second' WHERE token_hash = ${sha256(second.refresh_token)}`,
      );
      const r = await token(t, { grant_type: "refresh_token", refresh_token: second.refresh_token }, { auth: basic(client.id, secret) });
      expect(r.status, change).toBe(400);
      expect(r.body.error).toBe("invalid_grant");
      expect(await rotatedAt(second.refresh_token)).toBeNull();
    }
  });

  it("is refused after the user signs out of the session it came from", async () => {
    const { client, secret, sid, second } = await rotatedOnce();
    await t.inst.store.grants.revokeSessionTokens(sid, "logout");
    const r = await token(t, { grant_type: "refresh_token", refresh_token: second.refresh_token }, { auth: basic(client.id, secret) });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_grant");
  });

  it("is refused once its user is locked", async () => {
    const { client, secret, user, second } = await rotatedOnce();
    const locked = await t.api(`/management/v1/users/${user.id}`, { method: "PATCH", json: { locked: true } });
    expect(locked.status).toBe(200);
    const r = await token(t, { grant_type: "refresh_token", refresh_token: second.refresh_token }, { auth: basic(client.id, secret) });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_grant");
  });

  it("carries the user's claims as they are now, not as they were at the last rotation", async () => {
    // A client that takes the user's claims in the ID token even with an access token.
    const { client, secret, user, second } = await rotatedOnce({ idTokenUserinfoAssertion: true });
    expect((await verify(t, second.id_token)).payload.name).toBe("Jane Doe");
    const renamed = await t.api(`/management/v1/users/${user.id}`, { method: "PATCH", json: { givenName: "Renamed" } });
    expect(renamed.status).toBe(200);
    const r = await token(t, { grant_type: "refresh_token", refresh_token: second.refresh_token }, { auth: basic(client.id, secret) });
    expect(r.status).toBe(200);
    expect((await verify(t, r.body.id_token)).payload.name).toBe("Renamed Doe");
    // And the one after it, remembered with the new claims, rotates as well.
    const next = await token(t, { grant_type: "refresh_token", refresh_token: r.body.refresh_token }, { auth: basic(client.id, secret) });
    expect(next.status).toBe(200);
    expect((await verify(t, next.body.id_token)).payload.name).toBe("Renamed Doe");
  });

  it("compares the user's version only for a read from memory, so a fresh read never loses to a profile change", async () => {
    const { first, user } = await start();
    const found = await t.inst.store.tokens.findWithGrant(first.refresh_token);
    await t.inst.db.execute(sql`UPDATE users SET updated_at = now() + interval '1 second' WHERE id = ${user.id}`);
    const rotation = { id: found!.token.id, value: first.refresh_token };
    // Remembered with the version read before the change: lost, nothing rotated.
    expect(await t.inst.store.tokens.markRotated({ ...rotation, userVersion: found!.user!.updatedAt })).toBe(false);
    expect(await rotatedAt(first.refresh_token)).toBeNull();
    // Just read (in a transaction, a change may commit between the read and the guard): won. Had
    // it lost, the grant would have taken the token for a reused one and revoked its family.
    expect(await t.inst.store.tokens.markRotated({ ...rotation, userVersion: null })).toBe(true);
  });

  it("finds the token by a key and checks its family, grant and user by their keys, not by scanning", async () => {
    const { first, user } = await start();
    const found = await t.inst.store.tokens.findWithGrant(first.refresh_token);
    const guard = markRotatedWrite(t.inst.db, { id: found!.token.id, value: first.refresh_token, userVersion: user.updatedAt }, new Date()).guard;
    // The statement as the store sends it (its text and parameters), explained.
    const plan = await planWithoutScans(t.inst.db, guard);
    expect(plan).not.toMatch(/Seq Scan/);
    // The token by either of its keys (the guard names both its hash and its id).
    expect(plan).toMatch(indexLookup(["token_hash", "id"], "'"));
    for (const key of ["family_id", "grant_id", "user_id"]) expect(plan).toMatch(indexLookup("id", `tokens.${key}`));
  });

  it("is not answered from memory for a token of another value or another client", async () => {
    const a = await rotatedOnce();
    const b = await start();
    // The successor belongs to a's client: b's client is refused, and a's still rotates it after.
    const wrong = await token(t, { grant_type: "refresh_token", refresh_token: a.second.refresh_token }, { auth: basic(b.client.id, b.secret) });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    const right = await token(t, { grant_type: "refresh_token", refresh_token: a.second.refresh_token }, { auth: basic(a.client.id, a.secret) });
    expect(right.status).toBe(200);
    const tampered = await token(t, { grant_type: "refresh_token", refresh_token: `${right.body.refresh_token as string}x` }, { auth: basic(a.client.id, a.secret) });
    expect(tampered.body.error).toBe("invalid_grant");
  });
});

describe("refresh_token grant, audit", () => {
  // Behind a trusted proxy (the loopback), so that each request can come from an address of its own.
  let p: TestInstance;
  beforeAll(async () => {
    p = await startTestInstance({ IDP_TRUSTED_PROXIES: "127.0.0.1/32,::1/128" });
  });
  afterAll(() => p.close());

  /** A code redeemed from `ip` by a client of its own: the refresh token, its family, and requests from any address. */
  async function redeemedFrom(ip: string) {
    const { client, secret } = await makeClient(p, {});
    const user = await makeUser(p);
    const sid = await makeSession(p, user.id);
    const { code, grantId } = await makeCode(p, { client, user, scopes: SCOPES, sessionId: sid });
    const from = (address: string) => ({ auth: basic(client.id, secret!), headers: { "x-forwarded-for": address } });
    const first = await token(p, { grant_type: "authorization_code", code, redirect_uri: REDIRECT }, from(ip));
    expect(first.status).toBe(200);
    const [family] = resultRows<{ id: string }>(await p.inst.db.execute(sql`SELECT id FROM refresh_token_families WHERE grant_id = ${grantId}`));
    return { grantId, familyId: family!.id, refreshToken: first.body.refresh_token as string, from };
  }

  const events = async (familyId: string) =>
    resultRows<{ ip: string | null; details: { previousIp: string | null; grantId: string } }>(
      await p.inst.db.execute(sql`SELECT ip, details FROM audit_events WHERE action = 'token.refreshed' AND target_id = ${familyId} ORDER BY id`),
    );

  it("records a family's first refresh and each one from another address than its last, not every rotation", async () => {
    const { grantId, familyId, refreshToken, from } = await redeemedFrom("198.51.100.1");
    let rt = refreshToken;
    const refresh = async (ip: string) => {
      const r = await token(p, { grant_type: "refresh_token", refresh_token: rt }, from(ip));
      expect(r.status).toBe(200);
      rt = r.body.refresh_token as string;
    };
    await refresh("198.51.100.1"); // the first refresh: recorded
    await refresh("198.51.100.1"); // same address: the rotation is in the tokens only
    await refresh("198.51.100.1");
    await refresh("203.0.113.9"); // another address: recorded, with the one before
    await refresh("203.0.113.9");
    await refresh("198.51.100.1"); // and back
    expect((await events(familyId)).map((e) => [e.ip, e.details.previousIp, e.details.grantId])).toEqual([
      ["198.51.100.1", null, grantId],
      ["203.0.113.9", "198.51.100.1", grantId],
      ["198.51.100.1", "203.0.113.9", grantId],
    ]);
    // Every rotation happened: six retired tokens and the live one.
    const rows = resultRows<{ n: number; rotated: number }>(
      await p.inst.db.execute(sql`SELECT count(*)::int AS n, count(rotated_at)::int AS rotated FROM tokens WHERE family_id = ${familyId}`),
    );
    expect(rows[0]).toEqual({ n: 7, rotated: 6 });
  });

  it("records the address on an instance that did not issue the token (read, not remembered) the same way", async () => {
    const { familyId, refreshToken, from } = await redeemedFrom("198.51.100.2");
    const second = await token(p, { grant_type: "refresh_token", refresh_token: refreshToken }, from("198.51.100.2"));
    // Forgotten, as another instance never knew it: the family's last address comes from the database.
    await p.inst.store.issuedRefreshTokens.take(second.body.refresh_token as string);
    const third = await token(p, { grant_type: "refresh_token", refresh_token: second.body.refresh_token as string }, from("198.51.100.2"));
    expect(third.status).toBe(200);
    const moved = await token(p, { grant_type: "refresh_token", refresh_token: third.body.refresh_token as string }, from("192.0.2.4"));
    expect(moved.status).toBe(200);
    expect((await events(familyId)).map((e) => e.ip)).toEqual(["198.51.100.2", "192.0.2.4"]);
  });
});
