import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestInstance, type TestInstance } from "./harness";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

async function createUser(body: Record<string, unknown>) {
  const res = await t.api("/management/v1/users", { method: "POST", json: body });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string };
}

async function patFor(userId: string) {
  const res = await t.api(`/management/v1/users/${userId}/pats`, { method: "POST", json: {} });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; token: string; expiresAt: string | null };
}

describe("management API authentication", () => {
  it("answers 401 with WWW-Authenticate: Bearer without a token, with a wrong token and with a malformed header", async () => {
    const variants: Record<string, string>[] = [{}, { authorization: "Bearer torii_pat_wrong" }, { authorization: "Basic YWRtaW46eA==" }];
    for (const headers of variants) {
      const res = await t.api("/management/v1/clients", { auth: false, headers });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
      const body = await res.json();
      expect(body.error).toBe("unauthorized");
      expect(typeof body.message).toBe("string");
    }
  });

  it("does not reveal routes without a token: an unknown path is 401 too", async () => {
    const res = await t.api("/management/v1/nothing-here", { auth: false });
    expect(res.status).toBe(401);
  });

  it("accepts a PAT created for an admin user, and answers 403 to a PAT of a non-admin", async () => {
    const admin = await createUser({ username: "second-admin", password: "a long enough password", roles: ["admin"] });
    const adminPat = await patFor(admin.id);
    expect(adminPat.token).toMatch(/^torii_pat_/);
    const ok = await t.api("/management/v1/clients", { headers: { authorization: `Bearer ${adminPat.token}` } });
    expect(ok.status).toBe(200);

    const plain = await createUser({ type: "machine", username: "robot-no-admin" });
    const plainPat = await patFor(plain.id);
    const denied = await t.api("/management/v1/clients", { headers: { authorization: `Bearer ${plainPat.token}` } });
    expect(denied.status).toBe(403);
    expect((await denied.json()).error).toBe("forbidden");
    expect(denied.headers.get("www-authenticate")).toMatch(/^Bearer realm="management", error="insufficient_scope"/);
  });

  it("refuses an expired PAT and a PAT of a locked admin, and a revoked PAT", async () => {
    const admin = await createUser({ type: "machine", username: "admin-bot", roles: ["admin"] });
    const pat = await patFor(admin.id);
    const auth = { authorization: `Bearer ${pat.token}` };
    expect((await t.api("/management/v1/features", { headers: auth })).status).toBe(200);

    await t.api(`/management/v1/users/${admin.id}`, { method: "PATCH", json: { locked: true } });
    expect((await t.api("/management/v1/features", { headers: auth })).status).toBe(401);
    await t.api(`/management/v1/users/${admin.id}`, { method: "PATCH", json: { locked: false } });
    expect((await t.api("/management/v1/features", { headers: auth })).status).toBe(200);

    const del = await t.api(`/management/v1/users/${admin.id}/pats/${pat.id}`, { method: "DELETE" });
    expect(del.status).toBe(204);
    expect((await t.api("/management/v1/features", { headers: auth })).status).toBe(401);
  });

  it("lists PATs as metadata only and refuses an expiry in the past", async () => {
    const user = await createUser({ type: "machine", username: "pat-lister" });
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await t.api(`/management/v1/users/${user.id}/pats`, { method: "POST", json: { expiresAt } });
    expect(created.status).toBe(201);
    expect((await created.json()).expiresAt).toBe(expiresAt);
    const list = await (await t.api(`/management/v1/users/${user.id}/pats`)).json();
    expect(list.pats).toHaveLength(1);
    expect(JSON.stringify(list)).not.toMatch(/torii_pat_|token/i);

    const past = await t.api(`/management/v1/users/${user.id}/pats`, {
      method: "POST",
      json: { expiresAt: "2001-01-01T00:00:00Z" },
    });
    expect(past.status).toBe(400);
    expect((await past.json()).fields[0].path).toBe("expiresAt");
  });
});

describe("management API routing and errors", () => {
  it("answers 404 for unknown routes and ids, and 405 with Allow for a wrong method", async () => {
    const unknown = await t.api("/management/v1/nothing-here");
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toBe("not_found");

    expect((await t.api("/management/v1/clients/123456")).status).toBe(404);
    expect((await t.api("/management/v1/users/123456")).status).toBe(404);

    const put = await t.api("/management/v1/clients", { method: "PUT", json: {} });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("POST, GET, HEAD");
    expect((await put.json()).error).toBe("method_not_allowed");
  });

  it("answers HEAD as GET, without the body", async () => {
    const get = await t.api("/management/v1/clients");
    const head = await t.api("/management/v1/clients", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe(get.headers.get("content-type"));
    expect(await head.text()).toBe("");
    expect((await t.api("/management/v1/clients", { method: "HEAD", auth: false })).status).toBe(401);
    expect((await t.api("/management/v1/openapi.json", { method: "HEAD", auth: false })).status).toBe(200);
    const post = await t.api("/management/v1/keys/rotate", { method: "HEAD" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("POST");
  });

  it("answers 400 for malformed JSON and for a body that is not JSON, never 500", async () => {
    const malformed = await t.api("/management/v1/clients", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"name": ',
    });
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error).toBe("invalid_request");

    const form = await t.api("/management/v1/clients", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "name=x",
    });
    expect(form.status).toBe(400);

    const array = await t.api("/management/v1/clients", { method: "POST", json: [1, 2] });
    expect(array.status).toBe(400);
    const nul = await t.api("/management/v1/users", { method: "POST", json: null });
    expect(nul.status).toBe(400);
  });

  it("never caches responses", async () => {
    const res = await t.api("/management/v1/settings");
    expect(res.headers.get("cache-control")).toBe("no-store");
  });
});

describe("GET /management/v1/openapi.json", () => {
  it("is an OpenAPI 3.1 document listing every route with its methods", async () => {
    const res = await fetch(t.baseUrl + "/management/v1/openapi.json");
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBeTruthy();
    expect(doc.servers[0].url).toBe(`${t.issuer}/management/v1`);
    expect(doc.components.securitySchemes.pat).toMatchObject({ type: "http", scheme: "bearer" });

    const expected: Record<string, string[]> = {
      "/clients": ["get", "post"],
      "/clients/{clientId}": ["delete", "get", "patch"],
      "/clients/{clientId}/secret": ["post"],
      "/users": ["get", "post"],
      "/users/{userId}": ["delete", "get", "patch"],
      "/users/{userId}/password": ["post"],
      "/users/{userId}/keys": ["get", "post"],
      "/users/{userId}/keys/{keyId}": ["delete"],
      "/users/{userId}/pats": ["get", "post"],
      "/users/{userId}/pats/{patId}": ["delete"],
      "/users/{userId}/consents": ["get"],
      "/users/{userId}/consents/{clientId}": ["delete"],
      "/users/{userId}/lockout": ["delete", "get"],
      "/users/{userId}/factors": ["delete", "get"],
      "/users/{userId}/factors/{factorId}": ["delete"],
      "/users/{userId}/roles": ["get", "put"],
      "/clients/{clientId}/roles": ["get", "put"],
      "/apis": ["get", "post"],
      "/settings/smtp": ["delete", "get", "put"],
      "/settings/smtp/test": ["post"],
      "/outbox": ["get"],
      "/outbox/{mailId}": ["get"],
      "/users/{userId}/password-reset": ["post"],
      "/users/{userId}/email-verification": ["post"],
      "/apis/{apiId}": ["delete", "get", "patch"],
      "/apis/{apiId}/secret": ["post"],
      "/apis/{apiId}/roles/{roleKey}/holders": ["delete", "get", "post"],
      "/features": ["get", "put"],
      "/keys": ["get"],
      "/keys/rotate": ["post"],
      "/settings": ["get", "put"],
      "/branding": ["get", "put"],
      "/audit": ["get"],
      "/texts/{locale}": ["get", "put"],
      "/openapi.json": ["get"],
    };
    for (const [path, methods] of Object.entries(expected)) {
      expect(Object.keys(doc.paths[path] ?? {}).sort(), path).toEqual(methods);
    }
    expect(Object.keys(doc.paths).sort()).toEqual(Object.keys(expected).sort());

    // Every $ref resolves, and the body schemas are the validation schemas (strict objects).
    const refs = JSON.stringify(doc).match(/#\/components\/schemas\/[A-Za-z]+/g) ?? [];
    for (const r of refs) expect(doc.components.schemas[r.split("/").pop()!], r).toBeTruthy();
    const create = doc.components.schemas.ClientCreate;
    expect(create.required).toEqual(["name"]);
    expect(create.additionalProperties).toBe(false);
    expect(create.properties.authMethod.enum).toEqual(["client_secret_basic", "client_secret_post", "none", "private_key_jwt"]);
    const list = doc.paths["/users"].get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(["limit", "offset", "search", "type", "ids"]);
    expect(doc.paths["/clients/{clientId}"].get.parameters[0]).toMatchObject({ name: "clientId", in: "path", required: true });

    // Every operation of the API documents the answers every route can give: no valid token, not
    // an administrator, and the database out of reach (503 with Retry-After, test/db-unavailable.test.ts).
    const error = { content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, { description: string }> }>>)) {
      if (path === "/openapi.json") continue;
      for (const [method, op] of Object.entries(operations)) {
        for (const status of ["401", "403", "503"]) expect(op.responses[status], `${method} ${path} ${status}`).toMatchObject(error);
        expect(op.responses["503"]!.description, `${method} ${path}`).toMatch(/Retry-After/);
      }
    }
  });
});
