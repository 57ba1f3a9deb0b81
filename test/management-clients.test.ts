import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditEvents, clients } from "@/db/schema";
import { verifyClientSecret } from "@/lib/oauth/client-auth";
import { readClient } from "@/lib/store/clients";
import { startTestInstance, type TestInstance } from "./harness";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const post = (path: string, json?: unknown) => t.api("/management/v1" + path, { method: "POST", json: json ?? {} });
const patch = (path: string, json: unknown) => t.api("/management/v1" + path, { method: "PATCH", json });
const get = (path: string) => t.api("/management/v1" + path);

async function fieldErrors(res: Response): Promise<{ path: string; code: string; message: string; params?: Record<string, unknown> }[]> {
  expect(res.status).toBe(400);
  const body = await res.json();
  expect(body.error).toBe("invalid_request");
  return body.fields;
}

const web = { name: "Web app", redirectUris: ["https://app.example.com/cb"] };

describe("clients", () => {
  it("creates a code-flow client with defaults; the secret is shown once and stored only as its SHA-256", async () => {
    const res = await post("/clients", web);
    expect(res.status).toBe(201);
    const c = await res.json();
    expect(c).toMatchObject({
      name: "Web app",
      redirectUris: ["https://app.example.com/cb"],
      postLogoutRedirectUris: [],
      responseTypes: ["code"],
      grantTypes: ["authorization_code"],
      authMethod: "client_secret_basic",
      accessTokenType: "jwt",
      idTokenUserinfoAssertion: false,
      accessTokenLifetime: 3600,
      idTokenLifetime: 3600,
      refreshTokenLifetime: 30 * 86_400,
      jwks: null,
      hasSecret: true,
    });
    expect(c.clientId).toMatch(/^\d+$/);
    expect(c.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 bits
    expect(new Date(c.createdAt).toISOString()).toBe(c.createdAt);

    const [row] = await t.inst.db.select().from(clients).where(eq(clients.id, c.clientId));
    expect(row!.secretHash).toBe(createHash("sha256").update(c.clientSecret).digest("base64url"));
    expect(JSON.stringify(row)).not.toContain(c.clientSecret);

    const one = await (await get(`/clients/${c.clientId}`)).json();
    expect(one.clientSecret).toBeUndefined();
    expect(JSON.stringify(one)).not.toContain(c.clientSecret);
    const list = await (await get("/clients")).json();
    expect(list.clients.some((x: { clientId: string }) => x.clientId === c.clientId)).toBe(true);
    expect(JSON.stringify(list)).not.toContain(c.clientSecret);
    expect(JSON.stringify(list)).not.toContain("secretHash");
  });

  it("takes lifetimes from the instance settings when not given", async () => {
    await t.api("/management/v1/settings", { method: "PUT", json: { lifetimes: { accessToken: 900, idToken: 600 } } });
    const c = await (await post("/clients", web)).json();
    expect(c.accessTokenLifetime).toBe(900);
    expect(c.idTokenLifetime).toBe(600);
    const own = await (await post("/clients", { ...web, accessTokenLifetime: 120 })).json();
    expect(own.accessTokenLifetime).toBe(120);
    await t.api("/management/v1/settings", { method: "PUT", json: { lifetimes: { accessToken: 3600, idToken: 3600 } } });
  });

  it("creates every registration field", async () => {
    const res = await post("/clients", {
      name: "Full",
      redirectUris: ["https://a.example/cb", "http://localhost:3000/cb", "http://127.0.0.1/cb", "http://[::1]:8080/cb", "com.example.app:/cb"],
      postLogoutRedirectUris: ["https://a.example/bye"],
      responseTypes: ["code", "id_token", "id_token token"],
      grantTypes: ["authorization_code", "implicit", "refresh_token", "urn:ietf:params:oauth:grant-type:token-exchange"],
      authMethod: "client_secret_post",
      accessTokenType: "opaque",
      idTokenUserinfoAssertion: true,
      accessTokenLifetime: 300,
      idTokenLifetime: 400,
      refreshTokenLifetime: 86_400,
    });
    expect(res.status).toBe(201);
    const c = await res.json();
    expect(c).toMatchObject({ accessTokenType: "opaque", idTokenUserinfoAssertion: true, authMethod: "client_secret_post" });
    expect(c.redirectUris).toHaveLength(5);
    expect(c.clientSecret).toBeTruthy();
  });

  it("creates a non-interactive client without redirect URIs", async () => {
    const res = await post("/clients", { name: "Backend", grantTypes: ["client_credentials"] });
    expect(res.status).toBe(201);
    const c = await res.json();
    expect(c.responseTypes).toEqual([]);
    expect(c.redirectUris).toEqual([]);
    expect(c.clientSecret).toBeTruthy();
  });

  it("registers a key of every algorithm discovery advertises for client assertions, and each key's assertion authenticates", async () => {
    const discovery = await (await t.api("/.well-known/openid-configuration", { auth: false })).json();
    const advertised = discovery.token_endpoint_auth_signing_alg_values_supported as string[];
    expect(advertised).toEqual(expect.arrayContaining(["ES512", "EdDSA"]));
    for (const alg of advertised) {
      const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
      const res = await post("/clients", { ...web, authMethod: "private_key_jwt", jwks: { keys: [{ ...(await exportJWK(publicKey)), kid: "k", alg }] } });
      expect(res.status, alg).toBe(201);
      const id = ((await res.json()) as { clientId: string }).clientId;
      const assertion = await new SignJWT({}).setProtectedHeader({ alg, kid: "k" }).setIssuer(id).setSubject(id).setAudience(t.issuer).setIssuedAt().setExpirationTime("1m").setJti(`${alg}-jti`).sign(privateKey);
      const revoke = await t.api("/oauth/v2/revoke", {
        method: "POST",
        auth: false,
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token: "unknown", client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", client_assertion: assertion }).toString(),
      });
      expect(revoke.status, alg).toBe(200);
    }
  });

  it("lists all clients, or one page of them with limit and offset; a bad limit is a 400", async () => {
    for (let i = 0; i < 3; i++) expect((await post("/clients", { ...web, name: `paged-${i}` })).status).toBe(201);
    const all = (await (await get("/clients")).json()) as { clients: { clientId: string }[]; total: number };
    expect(all.total).toBe(all.clients.length);
    const page = (await (await get("/clients?limit=2&offset=1")).json()) as { clients: { clientId: string }[]; total: number };
    expect(page.total).toBe(all.total);
    expect(page.clients.map((c) => c.clientId)).toEqual(all.clients.slice(1, 3).map((c) => c.clientId));
    for (const bad of ["limit=0", "limit=-1", "limit=201", "offset=-1", "limit=x"]) expect((await get(`/clients?${bad}`)).status, bad).toBe(400);
  });

  it("gives public and private_key_jwt clients no secret, and needs public keys for private_key_jwt", async () => {
    const spa = await (await post("/clients", { ...web, authMethod: "none" })).json();
    expect(spa.clientSecret).toBeUndefined();
    expect(spa.hasSecret).toBe(false);

    const missing = await fieldErrors(await post("/clients", { ...web, authMethod: "private_key_jwt" }));
    expect(missing.map((f) => f.path)).toEqual(["jwks"]);

    const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
    const pub = { ...(await exportJWK(publicKey)), kid: "k1" };
    const ok = await post("/clients", { ...web, authMethod: "private_key_jwt", jwks: { keys: [pub] } });
    expect(ok.status).toBe(201);
    const c = await ok.json();
    expect(c.clientSecret).toBeUndefined();
    expect(c.jwks.keys[0]).toMatchObject({ kty: "EC", crv: "P-256", kid: "k1", alg: "ES256" });

    const priv = await exportJWK(privateKey);
    const leaked = await fieldErrors(await post("/clients", { ...web, authMethod: "private_key_jwt", jwks: { keys: [priv] } }));
    expect(leaked[0]!.path).toBe("jwks.keys.0");
    expect(leaked[0]!.message).toMatch(/public/);

    const symmetric = await fieldErrors(
      await post("/clients", { ...web, authMethod: "private_key_jwt", jwks: { keys: [{ kty: "oct", k: "c2VjcmV0" }] } }),
    );
    expect(symmetric[0]!.path).toBe("jwks.keys.0");
  });

  it("validates redirect URIs with field paths", async () => {
    const fields = await fieldErrors(
      await post("/clients", {
        name: "Bad",
        redirectUris: [
          "https://ok.example/cb",
          "/relative",
          "https://a.example/cb#frag",
          "http://app.example.com/cb",
          "javascript:alert(1)",
          "https://user:pw@a.example/cb",
        ],
      }),
    );
    expect(fields.map((f) => f.path)).toEqual([
      "redirectUris.1",
      "redirectUris.2",
      "redirectUris.3",
      "redirectUris.4",
      "redirectUris.5",
    ]);
    expect(fields[0]!.message).toMatch(/absolute/);
    expect(fields[1]!.message).toMatch(/fragment/);
    expect(fields[2]!.message).toMatch(/http/);
    // Each problem has a stable code, for API clients and for the console's translations.
    expect(fields.map((f) => f.code)).toEqual([
      "redirect_uri_not_absolute",
      "redirect_uri_fragment",
      "redirect_uri_http",
      "redirect_uri_scheme",
      "redirect_uri_credentials",
    ]);

    const logout = await fieldErrors(await post("/clients", { ...web, postLogoutRedirectUris: ["http://evil.example/"] }));
    expect(logout.map((f) => f.path)).toEqual(["postLogoutRedirectUris.0"]);
  });

  it("refuses inconsistent response and grant types, unknown values and unknown fields", async () => {
    const noGrant = await fieldErrors(
      await post("/clients", { ...web, responseTypes: ["code"], grantTypes: ["client_credentials"] }),
    );
    expect(noGrant.map((f) => f.path)).toContain("grantTypes");
    expect(noGrant.map((f) => f.code)).toContain("code_needs_authorization_code");

    const implicit = await fieldErrors(await post("/clients", { ...web, responseTypes: ["id_token"], grantTypes: ["authorization_code"] }));
    expect(implicit.map((f) => f.path).sort()).toEqual(["grantTypes", "responseTypes"]);

    const interactiveNoUri = await fieldErrors(await post("/clients", { name: "x", responseTypes: ["code"] }));
    expect(interactiveNoUri.map((f) => f.path)).toEqual(["redirectUris"]);

    const publicCc = await fieldErrors(await post("/clients", { name: "x", grantTypes: ["client_credentials"], authMethod: "none" }));
    expect(publicCc.map((f) => f.path)).toEqual(["authMethod"]);
    expect(publicCc[0]!.code).toBe("client_credentials_needs_auth");
    // The grant takes a secret only (spec 5): a private_key_jwt client could never use it.
    const keyCc = await fieldErrors(await post("/clients", { name: "x", grantTypes: ["client_credentials"], authMethod: "private_key_jwt" }));
    expect(keyCc.find((f) => f.path === "authMethod")?.code).toBe("client_credentials_needs_secret");

    const bad = await fieldErrors(
      await post("/clients", { name: "", responseTypes: ["token"], authMethod: "magic", accessTokenLifetime: -5, redirect_uris: [] }),
    );
    expect(bad.map((f) => f.path).sort()).toEqual(["accessTokenLifetime", "authMethod", "name", "redirect_uris", "responseTypes.0"]);
    const code = (path: string) => bad.find((f) => f.path === path);
    expect(code("name")).toMatchObject({ code: "required" });
    expect(code("accessTokenLifetime")).toMatchObject({ code: "too_small", params: { minimum: 1 } });
    expect(code("authMethod")).toMatchObject({ code: "invalid_value" });
    expect(code("redirect_uris")).toMatchObject({ code: "unknown_field" });
  });

  it("derives the missing half of response and grant types", async () => {
    const implicit = await (await post("/clients", { ...web, responseTypes: ["id_token"] })).json();
    expect(implicit.grantTypes).toEqual(["implicit"]);
    const code = await (await post("/clients", { ...web, grantTypes: ["authorization_code", "refresh_token"] })).json();
    expect(code.responseTypes).toEqual(["code"]);
  });

  it("updates with PATCH, checking the merged registration", async () => {
    const c = await (await post("/clients", web)).json();
    const res = await patch(`/clients/${c.clientId}`, { name: "Renamed", redirectUris: ["https://new.example/cb"], accessTokenType: "opaque" });
    expect(res.status).toBe(200);
    const u = await res.json();
    expect(u).toMatchObject({ name: "Renamed", redirectUris: ["https://new.example/cb"], accessTokenType: "opaque", hasSecret: true });
    expect(u.clientSecret).toBeUndefined();
    expect((await readClient(t.inst.db, c.clientId))!.name).toBe("Renamed");

    const emptied = await fieldErrors(await patch(`/clients/${c.clientId}`, { redirectUris: [] }));
    expect(emptied.map((f) => f.path)).toEqual(["redirectUris"]);
    const bad = await fieldErrors(await patch(`/clients/${c.clientId}`, { redirectUris: ["ftp://x"] }));
    expect(bad.map((f) => f.path)).toEqual(["redirectUris.0"]);
    expect((await patch("/clients/999", { name: "x" })).status).toBe(404);
  });

  it("issues a secret when PATCH switches to a secret method, keeps it between them, and clears it when switching away", async () => {
    const c = await (await post("/clients", { ...web, authMethod: "none" })).json();
    const toBasic = await (await patch(`/clients/${c.clientId}`, { authMethod: "client_secret_basic" })).json();
    expect(toBasic.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    let row = (await readClient(t.inst.db, c.clientId))!;
    expect(verifyClientSecret(row, toBasic.clientSecret)).toBe(true);

    const toPost = await (await patch(`/clients/${c.clientId}`, { authMethod: "client_secret_post" })).json();
    expect(toPost.clientSecret).toBeUndefined();
    row = (await readClient(t.inst.db, c.clientId))!;
    expect(verifyClientSecret(row, toBasic.clientSecret)).toBe(true);

    const toNone = await (await patch(`/clients/${c.clientId}`, { authMethod: "none" })).json();
    expect(toNone.hasSecret).toBe(false);
    row = (await readClient(t.inst.db, c.clientId))!;
    expect(row.secretHash).toBeNull();
  });

  it("rotates the secret: the new one works, the old one no longer does", async () => {
    const c = await (await post("/clients", web)).json();
    const res = await post(`/clients/${c.clientId}/secret`);
    expect(res.status).toBe(200);
    const s = await res.json();
    expect(s.clientId).toBe(c.clientId);
    expect(s.clientSecret).not.toBe(c.clientSecret);
    const row = (await readClient(t.inst.db, c.clientId))!;
    expect(verifyClientSecret(row, s.clientSecret)).toBe(true);
    expect(verifyClientSecret(row, c.clientSecret)).toBe(false);

    const pub = await (await post("/clients", { ...web, authMethod: "none" })).json();
    expect((await post(`/clients/${pub.clientId}/secret`)).status).toBe(400);
    expect((await post("/clients/404404/secret")).status).toBe(404);
  });

  it("deletes, then answers 404", async () => {
    const c = await (await post("/clients", web)).json();
    const del = await t.api(`/management/v1/clients/${c.clientId}`, { method: "DELETE" });
    expect(del.status).toBe(204);
    expect((await get(`/clients/${c.clientId}`)).status).toBe(404);
    expect((await t.api(`/management/v1/clients/${c.clientId}`, { method: "DELETE" })).status).toBe(404);
  });

  it("records an audit event per change with the acting admin, address and user agent, never the secret", async () => {
    const c = await (
      await t.api("/management/v1/clients", { method: "POST", json: web, headers: { "user-agent": "audit-test/1" } })
    ).json();
    await post(`/clients/${c.clientId}/secret`);
    await patch(`/clients/${c.clientId}`, { name: "Audited" });
    await t.api(`/management/v1/clients/${c.clientId}`, { method: "DELETE" });
    const rows = await t.inst.db.select().from(auditEvents).where(eq(auditEvents.targetId, c.clientId));
    expect(rows.map((r) => r.action).sort()).toEqual(["client.created", "client.deleted", "client.secret_rotated", "client.updated"]);
    const created = rows.find((r) => r.action === "client.created")!;
    expect(created).toMatchObject({ actorType: "user", clientId: c.clientId, ip: "127.0.0.1", userAgent: "audit-test/1" });
    expect(created.actorId).toMatch(/^\d+$/);
    expect(JSON.stringify(rows)).not.toContain(c.clientSecret);
  });
});
