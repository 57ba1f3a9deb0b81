import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "@/lib/db/client";
import { sha256 } from "@/lib/crypto";
import { startTestInstance, type TestInstance } from "./harness";
import { basic, expectNoStore, makeClient, token, verify } from "./token-support";

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

  it("refuses unknown scopes with invalid_scope", async () => {
    const { client, secret } = await makeClient(t);
    const r = await token(t, { grant_type: "client_credentials", scope: "openid admin:all" }, { auth: basic(client.id, secret!) });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_scope");
    expectNoStore(r.res);
  });

  it("issues an opaque token of 256 random bits stored only by its hash", async () => {
    const { client, secret } = await makeClient(t, { accessTokenType: "opaque" });
    const r = await token(t, { grant_type: "client_credentials" }, { auth: basic(client.id, secret!) });
    expect(r.status).toBe(200);
    const value: string = r.body.access_token;
    expect(value.split(".")).toHaveLength(1);
    expect(Buffer.from(value, "base64url").length).toBeGreaterThanOrEqual(32);
    const rows = resultRows<{ token_hash: string; kind: string; client_id: string }>(
      await t.inst.db.execute(sql`SELECT token_hash, kind, client_id FROM tokens WHERE client_id = ${client.id}`),
    );
    expect(rows).toEqual([{ token_hash: sha256(value), kind: "access", client_id: client.id }]);
    const dump = JSON.stringify(resultRows(await t.inst.db.execute(sql`SELECT * FROM tokens`)));
    expect(dump).not.toContain(value);
  });

  it("refuses methods other than Basic or a body secret (per-grant table)", async () => {
    const { client } = await makeClient(t, { authMethod: "none" });
    const r = await token(t, { grant_type: "client_credentials", client_id: client.id });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("invalid_client");
  });
});
