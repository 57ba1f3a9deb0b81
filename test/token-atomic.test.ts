import { sql } from "drizzle-orm";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { randomToken, sha256 } from "@/lib/crypto";
import { resultRows } from "@/lib/db/client";
import { readSettings, updateSettings } from "@/lib/store/settings";
import { insertMachineKey } from "@/lib/store/users";
import { startTestInstance, type TestInstance } from "./harness";
import { basic, makeClient, makeCode, makeUser, token } from "./token-support";

/**
 * Each grant runs in one transaction (issue 11, item 4): a failure injected after the first write
 * leaves nothing behind and the code, refresh token or assertion still works, exactly once;
 * concurrent uses of one code or refresh token have exactly one winner.
 */

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());
afterEach(() => dropFailure());

const REDIRECT = "https://rp.example/cb";
const OFFLINE = ["openid", "profile", "offline_access"];

/**
 * A test-only trigger that raises an exception on every insert into `table` matching `when`,
 * until `dropFailure` removes it; the test then retries.
 *
 * Not a failure that happens once by itself (a counter the trigger reads): on PGlite, statements
 * of concurrent requests may share one commit, and when one of them fails, the server runs each
 * again alone (lib/db/pglite-thread.ts) so that the others are not failed with it. A failure that
 * has passed by then is absorbed by that rerun and the request succeeds, which is right for the
 * product but is not the failure the test means to inject. The token endpoint's rate-limit counter
 * is written without the request waiting for it, so such a neighbour can appear in any test.
 */
async function failWhile(table: string, when: string) {
  await t.inst.db.execute(
    sql.raw(`CREATE FUNCTION torii_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$`),
  );
  await t.inst.db.execute(sql.raw(`CREATE TRIGGER torii_test_fail BEFORE INSERT ON ${table} FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION torii_test_fail()`));
}

async function failAlways(tables: string[]) {
  await t.inst.db.execute(sql.raw(`CREATE FUNCTION torii_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$`));
  for (const table of tables) {
    await t.inst.db.execute(sql.raw(`CREATE TRIGGER torii_test_fail BEFORE INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION torii_test_fail()`));
  }
}

async function dropFailure() {
  for (const table of ["tokens", "audit_events", "grants", "refresh_token_families", "used_jtis", "authorization_codes"]) {
    await t.inst.db.execute(sql.raw(`DROP TRIGGER IF EXISTS torii_test_fail ON ${table}`));
  }
  await t.inst.db.execute(sql.raw(`DROP FUNCTION IF EXISTS torii_test_fail()`));
}

async function count(query: string): Promise<number> {
  const [row] = resultRows<{ n: number | string }>(await t.inst.db.execute(sql.raw(`SELECT count(*) AS n FROM ${query}`)));
  return Number(row!.n);
}

/** Row counts of everything a grant writes. */
async function snapshot() {
  return {
    grants: await count("grants"),
    tokens: await count("tokens"),
    families: await count("refresh_token_families"),
    revocations: await count("token_revocations"),
    audit: await count("audit_events"),
    jtis: await count("used_jtis"),
  };
}

async function codeFor(o: Parameters<typeof makeClient>[1] = {}, scopes = OFFLINE) {
  const { client, secret } = await makeClient(t, o);
  const user = await makeUser(t);
  const { code, grantId } = await makeCode(t, { client, user, scopes });
  const redeem = () => token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT }, { auth: basic(client.id, secret!) });
  return { client, secret: secret!, user, code, grantId, redeem };
}

describe("authorization_code grant in one transaction", () => {
  for (const [what, table, when] of [
    ["the refresh token (after the code was marked used and the family written)", "tokens", "NEW.kind = 'refresh'"],
    ["the audit event (the last write)", "audit_events", "NEW.action = 'token.issued'"],
  ] as const) {
    it(`leaves nothing behind when writing ${what} fails, and the code then works exactly once`, async () => {
      const { code, grantId, redeem } = await codeFor({ accessTokenType: "opaque" });
      const before = await snapshot();
      await failWhile(table, when);
      const failed = await redeem();
      expect(failed.status).toBe(500);
      expect(failed.body.error).toBe("server_error");
      expect(await snapshot()).toEqual(before);
      expect(await count(`authorization_codes WHERE code_hash = '${sha256(code)}' AND used_at IS NULL`)).toBe(1);
      expect(await count(`grants WHERE id = '${grantId}' AND revoked_at IS NULL`)).toBe(1);
      await dropFailure();

      const ok = await redeem();
      expect(ok.status).toBe(200);
      expect(ok.body.access_token).toBeTruthy();
      expect(ok.body.refresh_token).toBeTruthy();
      // Exactly once: one refresh token (the opaque access token is sealed, not stored), one
      // family, and a second redemption is a replay.
      expect(await count(`tokens WHERE grant_id = '${grantId}'`)).toBe(1);
      expect(await count(`refresh_token_families WHERE grant_id = '${grantId}'`)).toBe(1);
      const again = await redeem();
      expect(again.status).toBe(400);
      expect(again.body.error).toBe("invalid_grant");
    });
  }

  it("lets exactly one of ten concurrent redemptions of one code succeed; the others are invalid_grant", async () => {
    const { redeem, grantId } = await codeFor();
    const results = await Promise.all(Array.from({ length: 10 }, () => redeem()));
    expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(400)]);
    for (const r of results.filter((r) => r.status !== 200)) expect(r.body.error).toBe("invalid_grant");
    // One family, one refresh token: the losers wrote no tokens of their own.
    expect(await count(`refresh_token_families WHERE grant_id = '${grantId}'`)).toBe(1);
    expect(await count(`tokens WHERE grant_id = '${grantId}' AND kind = 'refresh'`)).toBe(1);
  });
});

describe("refresh_token grant in one transaction", () => {
  async function refreshable(o: Parameters<typeof makeClient>[1] = {}) {
    const c = await codeFor(o);
    const first = await c.redeem();
    expect(first.status).toBe(200);
    const refresh = (rt: string = first.body.refresh_token) =>
      token(t, { grant_type: "refresh_token", refresh_token: rt }, { auth: basic(c.client.id, c.secret) });
    return { ...c, first: first.body, refresh };
  }

  for (const [what, table, when] of [
    ["the successor (after the presented token was marked rotated)", "tokens", "NEW.kind = 'refresh'"],
    ["the audit event (the last write)", "audit_events", "NEW.action = 'token.refreshed'"],
  ] as const) {
    it(`leaves the presented token unrotated when writing ${what} fails, so the client's retry works, exactly once`, async () => {
      const { first, grantId, refresh } = await refreshable({ accessTokenType: "opaque" });
      const before = await snapshot();
      await failWhile(table, when);
      const failed = await refresh();
      expect(failed.status).toBe(500);
      expect(await snapshot()).toEqual(before);
      expect(await count(`tokens WHERE token_hash = '${sha256(first.refresh_token)}' AND rotated_at IS NULL AND revoked_at IS NULL`)).toBe(1);
      await dropFailure();

      // The retry of a request whose answer was lost: not taken for reuse, the user stays signed in.
      const retry = await refresh();
      expect(retry.status).toBe(200);
      expect(retry.body.refresh_token).toBeTruthy();
      expect(await count(`tokens WHERE grant_id = '${grantId}' AND kind = 'refresh'`)).toBe(2);
      expect(await count(`refresh_token_families WHERE grant_id = '${grantId}' AND revoked_at IS NULL`)).toBe(1);
      expect((await refresh(retry.body.refresh_token)).status).toBe(200);
      // And exactly once: the presented token is now rotated, presenting it again is reuse.
      const reuse = await refresh();
      expect(reuse.status).toBe(400);
      expect(reuse.body.error).toBe("invalid_grant");
    });
  }

  it("lets exactly one of ten concurrent refreshes with one token succeed (no reuse interval)", async () => {
    await updateSettings(t.inst, { lifetimes: { ...(await currentLifetimes()), refreshTokenReuseInterval: 0 } });
    const { refresh, grantId } = await refreshable();
    const results = await Promise.all(Array.from({ length: 10 }, () => refresh()));
    expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(400)]);
    for (const r of results.filter((r) => r.status !== 200)) expect(r.body.error).toBe("invalid_grant");
    // The others were reuse: the family is revoked.
    expect(await count(`refresh_token_families WHERE grant_id = '${grantId}' AND revoked_at IS NOT NULL`)).toBe(1);
  });

  it("gives ten concurrent refreshes with one token the same successor within the reuse interval", async () => {
    await updateSettings(t.inst, { lifetimes: { ...(await currentLifetimes()), refreshTokenReuseInterval: 30 } });
    try {
      const { refresh, grantId } = await refreshable();
      const results = await Promise.all(Array.from({ length: 10 }, () => refresh()));
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
      expect(new Set(results.map((r) => r.body.refresh_token)).size).toBe(1);
      expect(await count(`tokens WHERE grant_id = '${grantId}' AND kind = 'refresh'`)).toBe(2);
      expect((await refresh(results[0]!.body.refresh_token)).status).toBe(200);
    } finally {
      await updateSettings(t.inst, { lifetimes: { ...(await currentLifetimes()), refreshTokenReuseInterval: 0 } });
    }
  });
});

async function currentLifetimes() {
  return (await readSettings(t.inst.db))!.lifetimes;
}

describe("the other grants in one transaction", () => {
  it("client_credentials with a JWT access token writes nothing (every write would fail here)", async () => {
    const { client, secret } = await makeClient(t, { accessTokenType: "jwt" });
    const before = await snapshot();
    await failAlways(["tokens", "audit_events", "grants", "refresh_token_families", "used_jtis"]);
    const r = await token(t, { grant_type: "client_credentials", scope: "openid" }, { auth: basic(client.id, secret!) });
    expect(r.status).toBe(200);
    expect(r.body.access_token.split(".")).toHaveLength(3);
    await dropFailure();
    expect(await snapshot()).toEqual(before);
  });

  it("jwt-bearer: a failure keeps the assertion's jti unused and writes no grant; the assertion then works once", async () => {
    const keys = await generateKeyPair("RS256", { extractable: true });
    const machine = await makeUser(t, { type: "machine", name: "robot", email: null, givenName: null, familyName: null });
    const kid = (await insertMachineKey(t.inst.db, machine.id, await exportJWK(keys.publicKey), "RS256")).id;
    const { client, secret } = await makeClient(t, { accessTokenType: "opaque" });
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({ jti: randomToken(12) })
      .setProtectedHeader({ alg: "RS256", kid })
      .setIssuer(machine.id)
      .setSubject(machine.id)
      .setAudience(t.issuer)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(keys.privateKey);
    const grant = () => token(t, { grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion }, { auth: basic(client.id, secret!) });
    const before = await snapshot();
    await failWhile("audit_events", "NEW.action = 'token.issued'");
    expect((await grant()).status).toBe(500);
    expect(await snapshot()).toEqual(before);
    await dropFailure();
    expect((await grant()).status).toBe(200);
    const again = await grant();
    expect(again.status).toBe(400);
    expect(again.body.error).toBe("invalid_grant");
  });

  it("token exchange: a failure leaves no grant or token behind; the same request then succeeds", async () => {
    const features = { tokenExchange: true, impersonation: false };
    await updateSettings(t.inst, { features });
    const { client, secret, redeem } = await codeFor({ accessTokenType: "opaque" }, ["openid", "offline_access"]);
    const subject = (await redeem()).body.access_token as string;
    const exchange = () =>
      token(
        t,
        {
          grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
          subject_token: subject,
          subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
          scope: "openid offline_access",
        },
        { auth: basic(client.id, secret) },
      );
    const before = await snapshot();
    await failWhile("tokens", "NEW.kind = 'refresh'");
    expect((await exchange()).status).toBe(500);
    expect(await snapshot()).toEqual(before);
    await dropFailure();
    const ok = await exchange();
    expect(ok.status).toBe(200);
    expect(ok.body.refresh_token).toBeTruthy();
  });
});
