import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "@/lib/crypto";
import { startTestInstance, type TestInstance } from "./harness";
import { basic, makeClient, makeCode, makeUser, token, verify } from "./token-support";

/** Issue 15 item 3: the refresh token reuse interval (`refreshTokenReuseIntervalSeconds`). */

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const settings = (json?: unknown) =>
  json === undefined ? t.api("/management/v1/settings") : t.api("/management/v1/settings", { method: "PUT", json });

async function setInterval(seconds: number) {
  const res = await settings({ refreshTokenReuseIntervalSeconds: seconds });
  expect(res.status).toBe(200);
  expect((await res.json()).refreshTokenReuseIntervalSeconds).toBe(seconds);
}

async function signedIn(o: Parameters<typeof makeClient>[1] = {}) {
  const { client, secret } = await makeClient(t, o);
  const user = await makeUser(t);
  const { code, grantId } = await makeCode(t, { client, user, scopes: ["openid", "profile", "offline_access"] });
  const first = await token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb" }, { auth: basic(client.id, secret!) });
  expect(first.status).toBe(200);
  const refresh = (refresh_token: string) => token(t, { grant_type: "refresh_token", refresh_token }, { auth: basic(client.id, secret!) });
  const introspect = async (tok: string) => {
    const res = await fetch(t.baseUrl + "/oauth/v2/introspect", {
      method: "POST",
      headers: { authorization: basic(client.id, secret!), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: tok }),
    });
    return (await res.json()).active as boolean;
  };
  return { client, secret: secret!, user, grantId, rt0: first.body.refresh_token as string, refresh, introspect };
}

/** Moves a token's rotation into the past, as if `seconds` had gone by since. */
async function rotatedAgo(refreshToken: string, seconds: number) {
  await t.inst.db.execute(sql`UPDATE tokens SET rotated_at = now() - make_interval(secs => ${seconds}) WHERE token_hash = ${sha256(refreshToken)}`);
}

describe("refreshTokenReuseIntervalSeconds in the management API", () => {
  it("defaults to 0, takes 0 to 60 and refuses anything else with its field path", async () => {
    const s = await (await settings()).json();
    expect(s.refreshTokenReuseIntervalSeconds).toBe(0);
    expect(s.lifetimes).not.toHaveProperty("refreshTokenReuseInterval");
    await setInterval(60);
    for (const bad of [61, -1, 1.5, "10"]) {
      const res = await settings({ refreshTokenReuseIntervalSeconds: bad });
      expect(res.status, String(bad)).toBe(400);
      expect((await res.json()).fields.map((f: { path: string }) => f.path)).toEqual(["refreshTokenReuseIntervalSeconds"]);
    }
    // Only at its own name, not inside lifetimes where it is kept.
    expect((await settings({ lifetimes: { refreshTokenReuseInterval: 5 } })).status).toBe(400);
    // Other changes keep it, and it keeps the lifetimes.
    const other = await (await settings({ lifetimes: { accessToken: 3000 } })).json();
    expect(other).toMatchObject({ refreshTokenReuseIntervalSeconds: 60, lifetimes: { accessToken: 3000 } });
    await setInterval(0);
    expect((await (await settings()).json()).lifetimes.accessToken).toBe(3000);
  });

  it("is described in the OpenAPI document", async () => {
    const doc = await (await t.api("/management/v1/openapi.json")).json();
    for (const name of ["Settings", "SettingsUpdate"]) {
      const prop = doc.components.schemas[name].properties.refreshTokenReuseIntervalSeconds;
      expect(prop).toMatchObject({ type: "integer", minimum: 0, maximum: 60 });
      expect(prop.description).toMatch(/reuse detection/);
    }
  });
});

describe("refresh token reuse interval", () => {
  it("with 0 (the default), presenting a rotated token again revokes the family at once", async () => {
    await setInterval(0);
    const { rt0, refresh } = await signedIn();
    const r1 = await refresh(rt0);
    expect(r1.status).toBe(200);
    const again = await refresh(rt0);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe("invalid_grant");
    expect((await refresh(r1.body.refresh_token)).body.error).toBe("invalid_grant");
  });

  it("within the interval, returns the same successor with a fresh access token, and the family lives on", async () => {
    await setInterval(30);
    const { user, client, rt0, refresh, introspect } = await signedIn();
    const r1 = await refresh(rt0);
    expect(r1.status).toBe(200);
    // The answer was lost, or another tab refreshed at the same moment: the same token again.
    await rotatedAgo(rt0, 20);
    const again = await refresh(rt0);
    expect(again.status).toBe(200);
    expect(again.body.refresh_token).toBe(r1.body.refresh_token);
    expect(again.body.access_token).not.toBe(r1.body.access_token);
    expect((await verify(t, again.body.access_token)).payload).toMatchObject({ sub: user.id, client_id: client.id });
    expect((await verify(t, again.body.id_token)).payload.sub).toBe(user.id);
    // Both access tokens stay valid, and the successor continues the family.
    expect(await introspect(r1.body.access_token)).toBe(true);
    expect(await introspect(again.body.access_token)).toBe(true);
    const r2 = await refresh(r1.body.refresh_token);
    expect(r2.status).toBe(200);
    expect(r2.body.refresh_token).not.toBe(r1.body.refresh_token);
    // The successor is used now: presenting the first token again is reuse, even within the interval.
    const late = await refresh(rt0);
    expect(late.body.error).toBe("invalid_grant");
    expect((await refresh(r2.body.refresh_token)).body.error).toBe("invalid_grant");
    expect(await introspect(r2.body.access_token)).toBe(false);
  });

  it("outside the interval, presenting the rotated token again is reuse: the family and its access tokens are revoked", async () => {
    await setInterval(30);
    const { rt0, refresh, introspect } = await signedIn({ accessTokenType: "opaque" });
    const r1 = await refresh(rt0);
    expect(r1.status).toBe(200);
    await rotatedAgo(rt0, 31);
    const again = await refresh(rt0);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe("invalid_grant");
    expect(await introspect(r1.body.access_token)).toBe(false);
    expect((await refresh(r1.body.refresh_token)).body.error).toBe("invalid_grant");
  });

  it("gives nothing within the interval once the family was revoked (RFC 7009 revocation of the successor)", async () => {
    await setInterval(30);
    const { client, secret, rt0, refresh } = await signedIn();
    const r1 = await refresh(rt0);
    expect(r1.status).toBe(200);
    const revoked = await fetch(t.baseUrl + "/oauth/v2/revoke", {
      method: "POST",
      headers: { authorization: basic(client.id, secret), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: r1.body.refresh_token, token_type_hint: "refresh_token" }),
    });
    expect(revoked.status).toBe(200);
    const again = await refresh(rt0);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe("invalid_grant");
  });
});
