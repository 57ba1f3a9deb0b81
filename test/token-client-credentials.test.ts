import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "@/lib/db/client";
import { startTestInstance, type TestInstance } from "./harness";
import { basic, expectNoStore, makeClient, token, verify } from "./token-support";
import { introspect } from "./introspect-support";
import { rawRequest } from "./raw-http";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

async function count(table: string): Promise<number> {
  const rows = resultRows<{ n: number }>(await t.inst.db.execute(sql.raw(`SELECT count(*)::int AS n FROM ${table}`)));
  return rows[0]!.n;
}

describe("client_credentials grant", () => {
  it("issues an RS256 JWT access token for the client as subject, with Basic, and writes nothing", async () => {
    const { client, secret } = await makeClient(t);
    const before = await Promise.all(["tokens", "grants", "audit_events", "used_jtis"].map(count));
    const r = await token(t, { grant_type: "client_credentials", scope: "openid profile" }, { auth: basic(client.id, secret!) });
    expect(r.status).toBe(200);
    expectNoStore(r.res);
    expect(r.body.token_type).toBe("Bearer");
    expect(r.body.expires_in).toBe(900);
    expect(r.body.scope).toBe("openid profile");
    expect(r.body.id_token).toBeUndefined();
    expect(r.body.refresh_token).toBeUndefined();
    const { payload, header } = await verify(t, r.body.access_token);
    expect(header.alg).toBe("RS256");
    expect(header.kid).toBeTruthy();
    expect(payload).toMatchObject({ iss: t.issuer, sub: client.id, aud: client.id, client_id: client.id, scope: "openid profile" });
    expect(payload.exp! - payload.iat!).toBe(900);
    expect(payload.nbf).toBe(payload.iat);
    expect(typeof payload.jti).toBe("string");
    expect(payload.sid).toBeUndefined();
    const after = await Promise.all(["tokens", "grants", "audit_events", "used_jtis"].map(count));
    expect(after).toEqual(before);
  });

  it("accepts client_id and client_secret in the body (client_secret_post)", async () => {
    const { client, secret } = await makeClient(t, { authMethod: "client_secret_post" });
    const r = await token(t, { grant_type: "client_credentials", client_id: client.id, client_secret: secret! });
    expect(r.status).toBe(200);
    expect((await verify(t, r.body.access_token)).payload.sub).toBe(client.id);
  });

  it("never grants offline_access (no refresh token for this grant)", async () => {
    const { client, secret } = await makeClient(t);
    const r = await token(t, { grant_type: "client_credentials", scope: "openid offline_access" }, { auth: basic(client.id, secret!) });
    expect(r.status).toBe(200);
    expect(r.body.scope).toBe("openid");
    expect(r.body.refresh_token).toBeUndefined();
  });

  it("without a scope: no scope in the response, the JWT or introspection (an empty string is no scope, RFC 6749 §3.3)", async () => {
    const { client, secret } = await makeClient(t);
    const r = await token(t, { grant_type: "client_credentials" }, { auth: basic(client.id, secret!) });
    expect(r.status).toBe(200);
    expect(r.body).not.toHaveProperty("scope");
    expect((await verify(t, r.body.access_token)).payload).not.toHaveProperty("scope");
    const res = await t.api("/oauth/v2/introspect", { method: "POST", auth: false, headers: { authorization: basic(client.id, secret!), "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ token: r.body.access_token }).toString() });
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.active).toBe(true);
    expect(body).not.toHaveProperty("scope");
  });

  it("refuses unknown scopes with invalid_scope", async () => {
    const { client, secret } = await makeClient(t);
    const r = await token(t, { grant_type: "client_credentials", scope: "openid admin:all" }, { auth: basic(client.id, secret!) });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_scope");
    expectNoStore(r.res);
  });

  it("issues an opaque token that is sealed, not stored: it reveals nothing, writes nothing, and introspects active", async () => {
    const { client, secret } = await makeClient(t, { accessTokenType: "opaque" });
    const before = await Promise.all(["tokens", "grants", "audit_events"].map(count));
    const r = await token(t, { grant_type: "client_credentials", scope: "openid" }, { auth: basic(client.id, secret!) });
    expect(r.status).toBe(200);
    const value: string = r.body.access_token;
    expect(value).toMatch(/^[A-Za-z0-9_-]+$/);
    // Neither the client nor the scope can be read out of it: it is encrypted, not encoded.
    const decoded = Buffer.from(value, "base64url").toString("latin1");
    expect(decoded).not.toContain(client.id);
    expect(decoded).not.toContain("openid");
    expect(await Promise.all(["tokens", "grants", "audit_events"].map(count))).toEqual(before);

    const auth = basic(client.id, secret!);
    const active = await introspect(t, value, auth);
    expect(active.body).toMatchObject({ active: true, client_id: client.id, sub: client.id, scope: "openid", token_type: "Bearer" });
    // One character changed anywhere is another token, and not one of ours.
    for (const at of [0, 10, value.length - 1]) {
      const altered = value.slice(0, at) + (value[at] === "A" ? "B" : "A") + value.slice(at + 1);
      expect((await introspect(t, altered, auth)).body).toEqual({ active: false });
    }
  });

  it("refuses methods other than Basic or a body secret (per-grant table)", async () => {
    const { client } = await makeClient(t, { authMethod: "none" });
    const r = await token(t, { grant_type: "client_credentials", client_id: client.id });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("invalid_client");
  });

  it("refuses a request with two Authorization headers instead of authenticating with either", async () => {
    const { client, secret } = await makeClient(t);
    const { other, otherSecret } = await makeClient(t).then((o) => ({ other: o.client, otherSecret: o.secret! }));
    const body = "grant_type=client_credentials";
    const raw =
      `POST /oauth/v2/token HTTP/1.1\r\nHost: ${new URL(t.baseUrl).host}\r\nConnection: close\r\n` +
      `Authorization: ${basic(client.id, secret!)}\r\nAuthorization: ${basic(other.id, otherSecret)}\r\n` +
      `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const r = await rawRequest(t.baseUrl, raw);
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body)).toMatchObject({ error: "invalid_client" });
  });
});
