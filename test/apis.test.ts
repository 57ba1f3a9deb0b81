import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createRemoteJWKSet, decodeJwt, exportJWK, generateKeyPair, jwtVerify, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consentApiGroups } from "@/lib/oauth/resources";
import { askedConsent } from "@/lib/login/consent-set";
import { getSettings, updateSettings } from "@/lib/store/settings";
import { insertMachineKey } from "@/lib/store/users";
import { startTestInstance, type TestInstance } from "./harness";
import { Browser, makeClient as makeRp, makeUser as makeLoginUser, redirectParams, REDIRECT } from "./authorize-support";
import { basic, CHALLENGE, makeClient, makeCode, makeUser, token, verify, VERIFIER } from "./token-support";

// API resources (RFC 8707 resource indicators), their scopes and roles, and introspection by the
// API itself; seen from the management API, the token endpoint and a resource server.
let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const ORDERS = "https://api.example/orders";
const BILLING = "https://api.example/billing";

async function json(res: Response): Promise<any> {
  return res.json();
}

async function createApi(body: Record<string, unknown>): Promise<any> {
  const res = await t.api("/management/v1/apis", { method: "POST", json: body });
  expect(res.status).toBe(201);
  return json(res);
}

async function introspect(auth: string, value: string): Promise<{ status: number; body: any }> {
  const res = await fetch(t.baseUrl + "/oauth/v2/introspect", {
    method: "POST",
    headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: value }).toString(),
  });
  return { status: res.status, body: await res.json() };
}

let orders: any;
let billing: any;

beforeAll(async () => {
  orders = await createApi({
    identifier: ORDERS,
    name: "Orders",
    scopes: [
      { name: "orders:read", description: "Read your orders", descriptions: { de: "Ihre Bestellungen lesen" } },
      { name: "orders:write", description: "Place orders" },
    ],
    roles: [
      { key: "viewer", name: "Viewer" },
      { key: "admin", name: "Administrator", description: "Everything" },
    ],
    accessTokenLifetime: 600,
  });
  billing = await createApi({ identifier: BILLING, name: "Billing", scopes: [{ name: "invoices:read" }], roles: [{ key: "clerk", name: "Clerk" }], accessTokenType: "opaque", accessTokenLifetime: 300 });
});

describe("API resources in the management API", () => {
  it("creates, lists, reads and changes an API; the view has what was sent", async () => {
    expect(orders).toMatchObject({
      apiId: expect.any(String),
      identifier: ORDERS,
      name: "Orders",
      scopes: [{ name: "orders:read", description: "Read your orders", descriptions: { de: "Ihre Bestellungen lesen" } }, { name: "orders:write", description: "Place orders" }],
      roles: [
        { key: "viewer", name: "Viewer", description: "" },
        { key: "admin", name: "Administrator", description: "Everything" },
      ],
      accessTokenType: "jwt",
      accessTokenLifetime: 600,
      hasSecret: false,
    });
    const list = await json(await t.api("/management/v1/apis"));
    expect(list.apis.map((a: any) => a.identifier)).toEqual(expect.arrayContaining([ORDERS, BILLING]));
    expect((await json(await t.api(`/management/v1/apis/${orders.apiId}`))).identifier).toBe(ORDERS);
    expect((await t.api("/management/v1/apis/nope")).status).toBe(404);

    const renamed = await t.api(`/management/v1/apis/${billing.apiId}`, { method: "PATCH", json: { name: "Billing API" } });
    expect(renamed.status).toBe(200);
    expect((await json(renamed)).name).toBe("Billing API");
  });

  it("the consent page groups the asked scopes by API, described in the user's language, else in its default text", async () => {
    const apis = await t.inst.store.apis.list();
    const asked = askedConsent(["openid", "orders:read"], [ORDERS, BILLING], apis);
    expect(asked).toEqual({ scopes: ["openid"], apis: { [ORDERS]: ["orders:read"], [BILLING]: [] } });
    expect(consentApiGroups(apis, asked.apis, "de")).toEqual([
      { identifier: ORDERS, name: "Orders", scopes: [{ name: "orders:read", description: "Ihre Bestellungen lesen" }] },
      { identifier: BILLING, name: "Billing API", scopes: [] },
    ]);
    expect(consentApiGroups(apis, asked.apis, "fr")[0]!.scopes).toEqual([{ name: "orders:read", description: "Read your orders" }]);
    // Only the APIs the request named carry its scopes.
    expect(askedConsent(["orders:read"], [BILLING], apis).apis).toEqual({ [BILLING]: [] });
  });

  it("refuses bad input with field errors and codes, and a taken identifier with 409", async () => {
    const bad = await t.api("/management/v1/apis", {
      method: "POST",
      json: { identifier: "orders", name: "x", scopes: [{ name: "openid" }, { name: "a b" }, { name: "ok" }, { name: "ok" }], roles: [{ key: "-x", name: "X" }] },
    });
    expect(bad.status).toBe(400);
    const codes = (await json(bad)).fields.map((f: any) => `${f.path}:${f.code}`);
    expect(codes).toEqual(
      expect.arrayContaining(["identifier:api_identifier_invalid", "scopes.0.name:scope_name_reserved", "scopes.1.name:scope_name_invalid", "scopes.3.name:scope_duplicate", "roles.0.key:role_key_invalid"]),
    );
    const fragment = await t.api("/management/v1/apis", { method: "POST", json: { identifier: "https://api.example/x#frag", name: "x" } });
    expect((await json(fragment)).fields[0].code).toBe("api_identifier_invalid");
    const taken = await t.api("/management/v1/apis", { method: "POST", json: { identifier: ORDERS, name: "again" } });
    expect(taken.status).toBe(409);
    expect((await json(taken)).fields[0].code).toBe("api_identifier_taken");
  });

  it("refuses to change an API's identifier with the field error identifier_immutable; the same value is accepted", async () => {
    const moved = await t.api(`/management/v1/apis/${billing.apiId}`, { method: "PATCH", json: { identifier: "https://api.example/moved", name: "Moved" } });
    expect(moved.status).toBe(400);
    expect((await json(moved)).fields).toEqual([expect.objectContaining({ path: "identifier", code: "identifier_immutable" })]);
    const view = await json(await t.api(`/management/v1/apis/${billing.apiId}`));
    expect(view).toMatchObject({ identifier: BILLING });
    expect(view.name).not.toBe("Moved");
    const same = await t.api(`/management/v1/apis/${billing.apiId}`, { method: "PATCH", json: { identifier: BILLING } });
    expect(same.status).toBe(200);
    expect((await json(same)).identifier).toBe(BILLING);
  });

  it("checks a client's apiScopes against the APIs", async () => {
    const res = await t.api("/management/v1/clients", {
      method: "POST",
      json: { name: "m2m", redirectUris: [], grantTypes: ["client_credentials"], responseTypes: [], apiScopes: { "https://nowhere.example": ["x"], [ORDERS]: ["orders:read", "orders:delete"] } },
    });
    expect(res.status).toBe(400);
    const codes = (await json(res)).fields.map((f: any) => f.code);
    expect(codes).toEqual(expect.arrayContaining(["api_unknown", "scope_unknown"]));
  });

  it("assigns roles to a user by API identifier, one by one and in bulk; unknown keys and ids are field errors", async () => {
    const user = await makeUser(t);
    const other = await makeUser(t);
    const put = await t.api(`/management/v1/users/${user.id}/roles`, { method: "PUT", json: { [ORDERS]: ["viewer"] } });
    expect(put.status).toBe(200);
    expect(await json(put)).toEqual({ [ORDERS]: ["viewer"] });
    const badRole = await t.api(`/management/v1/users/${user.id}/roles`, { method: "PUT", json: { [ORDERS]: ["owner"], "https://nowhere.example": [] } });
    expect(badRole.status).toBe(400);
    expect((await json(badRole)).fields.map((f: any) => f.code).sort()).toEqual(["api_unknown", "role_unknown"]);
    expect((await t.api(`/management/v1/users/nobody/roles`)).status).toBe(404);

    const bulk = await t.api(`/management/v1/apis/${orders.apiId}/roles/admin/holders`, { method: "POST", json: { userIds: [user.id, other.id] } });
    expect(bulk.status).toBe(200);
    expect((await json(bulk)).userIds).toEqual([user.id, other.id].sort());
    expect(await json(await t.api(`/management/v1/users/${other.id}/roles`))).toEqual({ [ORDERS]: ["admin"] });
    const unknownId = await t.api(`/management/v1/apis/${orders.apiId}/roles/admin/holders`, { method: "POST", json: { userIds: ["nobody"] } });
    expect((await json(unknownId)).fields[0]).toMatchObject({ path: "userIds.0", code: "user_unknown" });
    expect((await t.api(`/management/v1/apis/${orders.apiId}/roles/owner/holders`)).status).toBe(404);

    const removed = await t.api(`/management/v1/apis/${orders.apiId}/roles/admin/holders`, { method: "DELETE", json: { userIds: [other.id] } });
    expect((await json(removed)).userIds).toEqual([user.id]);
    expect(await json(await t.api(`/management/v1/users/${user.id}/roles`))).toEqual({ [ORDERS]: ["admin", "viewer"] });
  });

  it("lists a role's holders page by page (users by login name, then clients) and assigns by login name", async () => {
    const api = await createApi({ identifier: "https://api.example/paged", name: "Paged", roles: [{ key: "ops", name: "Ops" }] });
    const holders = `/management/v1/apis/${api.apiId}/roles/ops/holders`;
    const empty = await t.api(holders);
    expect(empty.status).toBe(200);
    expect(await json(empty)).toEqual({ holders: [], total: 0, limit: 50, offset: 0 });

    const carol = await makeUser(t, { username: "Carol-Paged" });
    const alice = await makeUser(t, { username: "alice-paged" });
    const bob = await makeUser(t, { username: "bob-paged" });
    const { client } = await makeClient(t, { name: "Batch job" });
    // Login names are case-insensitive; a name given twice counts once.
    const byName = await t.api(holders, { method: "POST", json: { usernames: ["ALICE-PAGED", "bob-paged", "carol-paged", "bob-paged"], clientIds: [client.id] } });
    expect(byName.status).toBe(200);
    expect((await json(byName)).userIds).toEqual([alice.id, bob.id, carol.id].sort());

    const first = await json(await t.api(`${holders}?limit=2`));
    expect(first).toEqual({
      holders: [
        { kind: "user", id: alice.id, name: "alice-paged" },
        { kind: "user", id: bob.id, name: "bob-paged" },
      ],
      total: 4,
      limit: 2,
      offset: 0,
    });
    const second = await json(await t.api(`${holders}?limit=2&offset=2`));
    expect(second.holders).toEqual([
      { kind: "user", id: carol.id, name: "Carol-Paged" },
      { kind: "client", id: client.id, name: "Batch job" },
    ]);
    expect((await json(await t.api(`${holders}?offset=4`))).holders).toEqual([]);

    for (const bad of ["limit=0", "limit=201", "limit=ten", "offset=-1"]) {
      const res = await t.api(`${holders}?${bad}`);
      expect(res.status, bad).toBe(400);
      expect((await json(res)).fields[0].path, bad).toBe(bad.split("=")[0]);
    }

    // An unknown login name changes nothing and names the line it was on.
    const unknown = await t.api(holders, { method: "DELETE", json: { usernames: ["alice-paged", "nobody-here"] } });
    expect(unknown.status).toBe(400);
    expect((await json(unknown)).fields).toEqual([expect.objectContaining({ path: "usernames.1", code: "username_unknown" })]);
    expect((await json(await t.api(holders))).total).toBe(4);
    const removed = await t.api(holders, { method: "DELETE", json: { usernames: ["alice-paged"] } });
    expect((await json(removed)).userIds).toEqual([bob.id, carol.id].sort());
  });

  it("a role the API no longer defines is taken from everyone who held it", async () => {
    const api = await createApi({ identifier: "https://api.example/temp", name: "Temp", roles: [{ key: "a", name: "A" }, { key: "b", name: "B" }] });
    const user = await makeUser(t);
    await t.api(`/management/v1/users/${user.id}/roles`, { method: "PUT", json: { [api.identifier]: ["a", "b"] } });
    await t.api(`/management/v1/apis/${api.apiId}`, { method: "PATCH", json: { roles: [{ key: "b", name: "B" }] } });
    expect(await json(await t.api(`/management/v1/users/${user.id}/roles`))).toEqual({ [api.identifier]: ["b"] });
  });
});

describe("resource indicators at the token endpoint (client credentials)", () => {
  it("a token for the API: aud is its identifier, scope the client's scopes there, the client's roles, the API's lifetime", async () => {
    const { client, secret } = await makeClient(t, { apiScopes: { [ORDERS]: ["orders:read", "orders:write"] } });
    await t.api(`/management/v1/clients/${client.id}/roles`, { method: "PUT", json: { [ORDERS]: ["viewer"] } });
    const all = await token(t, { grant_type: "client_credentials", resource: ORDERS }, { auth: basic(client.id, secret!) });
    expect(all.status).toBe(200);
    expect(all.body.scope).toBe("orders:read orders:write");
    expect(all.body.expires_in).toBe(600);
    const { payload } = await verify(t, all.body.access_token);
    expect(payload).toMatchObject({ aud: ORDERS, sub: client.id, scope: "orders:read orders:write", roles: ["viewer"] });

    // `audience` is a synonym; a narrower scope is kept; an API scope alone names its API.
    const narrow = await token(t, { grant_type: "client_credentials", audience: ORDERS, scope: "orders:read" }, { auth: basic(client.id, secret!) });
    expect(narrow.body.scope).toBe("orders:read");
    const inferred = await token(t, { grant_type: "client_credentials", scope: "orders:write" }, { auth: basic(client.id, secret!) });
    expect(decodeJwt(inferred.body.access_token).aud).toBe(ORDERS);

    // Without a resource or API scope: today's token, for the client itself.
    const plain = await token(t, { grant_type: "client_credentials" }, { auth: basic(client.id, secret!) });
    expect(decodeJwt(plain.body.access_token).aud).toBe(client.id);
  });

  it("invalid_target for an unknown, not allowed, relative or fragment resource; invalid_scope for a scope the client may not have", async () => {
    const { client, secret } = await makeClient(t, { apiScopes: { [ORDERS]: ["orders:read"] } });
    const auth = basic(client.id, secret!);
    for (const resource of ["https://api.example/unknown", BILLING, "orders", `${ORDERS}#x`]) {
      const r = await token(t, { grant_type: "client_credentials", resource }, { auth });
      expect(r.status, resource).toBe(400);
      expect(r.body.error, resource).toBe("invalid_target");
    }
    const two = await token(t, { grant_type: "client_credentials" }, { auth, body: `grant_type=client_credentials&resource=${encodeURIComponent(ORDERS)}&resource=${encodeURIComponent(BILLING)}` });
    expect(two.body.error).toBe("invalid_target");
    const scope = await token(t, { grant_type: "client_credentials", resource: ORDERS, scope: "orders:write" }, { auth });
    expect(scope.status).toBe(400);
    expect(scope.body.error).toBe("invalid_scope");
    const unknown = await token(t, { grant_type: "client_credentials", scope: "nothing:here" }, { auth });
    expect(unknown.body.error).toBe("invalid_scope");
  });

  it("an opaque-token API gets opaque tokens, with its own lifetime", async () => {
    const { client, secret } = await makeClient(t, { apiScopes: { [BILLING]: ["invoices:read"] } });
    const r = await token(t, { grant_type: "client_credentials", resource: BILLING }, { auth: basic(client.id, secret!) });
    expect(r.status).toBe(200);
    expect(r.body.access_token.split(".")).toHaveLength(1);
    expect(r.body.expires_in).toBe(300);
  });
});

describe("resource indicators at authorize, code exchange and refresh", () => {
  it("the grant covers the APIs named at authorize; each token is for one of them, with that API's scopes and the user's roles there", async () => {
    const { client, secret: s } = await makeClient(t, { apiScopes: { [ORDERS]: ["orders:read"], [BILLING]: ["invoices:read"] } });
    const secret = s!;
    const user = await makeLoginUser(t, `res-${Date.now()}`);
    await t.api(`/management/v1/users/${user.id}/roles`, { method: "PUT", json: { [ORDERS]: ["viewer"], [BILLING]: ["clerk"] } });

    const b = new Browser(t);
    const q = new URLSearchParams({ client_id: client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid offline_access roles orders:read invoices:read", state: "s1", code_challenge: CHALLENGE, code_challenge_method: "S256" });
    q.append("resource", ORDERS);
    q.append("resource", BILLING);
    const start = await b.authorizeRaw(`?${q}`);
    const done = await b.signIn(start, user.username, "correct horse battery");
    const code = redirectParams(done).get("code")!;
    expect(code).toBeTruthy();

    const auth = basic(client.id, secret);
    // A resource the authorization request did not name: invalid_target, and the code stays usable.
    const wrong = await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: VERIFIER, resource: "https://api.example/temp" }, { auth });
    expect(wrong.body.error).toBe("invalid_target");

    const exchanged = await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: VERIFIER, resource: ORDERS }, { auth });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.scope).toBe("openid offline_access roles orders:read");
    const at = (await verify(t, exchanged.body.access_token)).payload;
    expect(at).toMatchObject({ aud: ORDERS, sub: user.id, roles: ["viewer"] });
    expect(at.scope).toBe("openid offline_access roles orders:read");
    // The ID token is the client's, with the user's roles at every API (scope `roles`).
    const id = (await verify(t, exchanged.body.id_token)).payload;
    expect(id.aud).toBe(client.id);
    expect(id.roles).toEqual({ [BILLING]: ["clerk"], [ORDERS]: ["viewer"] });

    // The refresh token is exchanged for a token for the grant's other API (opaque there).
    const billingToken = await token(t, { grant_type: "refresh_token", refresh_token: exchanged.body.refresh_token, resource: BILLING }, { auth });
    expect(billingToken.status).toBe(200);
    expect(billingToken.body.scope).toBe("openid offline_access roles invoices:read");
    expect(billingToken.body.expires_in).toBe(300);
    const seen = await introspect(auth, billingToken.body.access_token);
    expect(seen.body).toMatchObject({ active: true, aud: BILLING, roles: ["clerk"] });

    // Not covered by the grant: invalid_target; the presented refresh token is not spent by that.
    const outside = await token(t, { grant_type: "refresh_token", refresh_token: billingToken.body.refresh_token, resource: "https://api.example/temp" }, { auth });
    expect(outside.body.error).toBe("invalid_target");
    const again = await token(t, { grant_type: "refresh_token", refresh_token: billingToken.body.refresh_token }, { auth });
    expect(again.status).toBe(200);
    // Without a resource: the first API the authorization request named.
    expect(decodeJwt(again.body.access_token).aud).toBe(ORDERS);

    // Userinfo takes the API's token (it carries openid) and answers the roles too.
    const ui = await fetch(t.baseUrl + "/oidc/v1/userinfo", { headers: { authorization: `Bearer ${again.body.access_token}` } });
    expect(ui.status).toBe(200);
    expect((await ui.json()).roles).toEqual({ [BILLING]: ["clerk"], [ORDERS]: ["viewer"] });
  });

  it("at authorize: an unknown resource is invalid_target and an API scope the client may not have invalid_scope, at the redirect URI with the state; a scope nothing defines is left out", async () => {
    const client = await makeRp(t, { apiScopes: { [ORDERS]: ["orders:read"] } });
    const b = new Browser(t);
    const base = { client_id: client.id, redirect_uri: REDIRECT, response_type: "code", state: "s2", code_challenge: CHALLENGE, code_challenge_method: "S256" };
    for (const [extra, error] of [
      [{ scope: "openid", resource: "https://api.example/unknown" }, "invalid_target"],
      [{ scope: "openid", resource: "not a uri" }, "invalid_target"],
      [{ scope: "openid", resource: BILLING }, "invalid_target"],
      [{ scope: "openid orders:write", resource: ORDERS }, "invalid_scope"],
    ] as const) {
      const p = redirectParams(await b.authorize({ ...base, ...extra }));
      expect(p.get("error"), JSON.stringify(extra)).toBe(error);
      expect(p.get("state")).toBe("s2");
    }
    // OIDC Core 3.1.2.1: values not understood are ignored; the request goes on to the login.
    expect((await b.authorize({ ...base, scope: "openid nothing:here" })).headers.get("location")).toMatch(/^\/ui\/login\?/);
  });
});

describe("a resource server", () => {
  let server: Server;
  let url: string;
  let apiSecret: string;
  beforeAll(async () => {
    apiSecret = (await json(await t.api(`/management/v1/apis/${orders.apiId}/secret`, { method: "POST" }))).clientSecret;
    const billingSecret = (await json(await t.api(`/management/v1/apis/${billing.apiId}/secret`, { method: "POST" }))).clientSecret as string;
    const jwks = createRemoteJWKSet(new URL(t.baseUrl + "/oauth/v2/keys"));
    // What an API does with a bearer token: a JWT is verified against the JWKS (issuer, audience);
    // an opaque token is introspected with the API's own credentials.
    const handle = async (req: IncomingMessage, res: ServerResponse) => {
      const bearer = (req.headers.authorization ?? "").replace(/^Bearer /, "");
      const needed = req.url === "/orders" ? { aud: ORDERS, role: "viewer", secret: apiSecret } : { aud: BILLING, role: "clerk", secret: billingSecret };
      let roles: string[] = [];
      try {
        if (bearer.split(".").length === 3) {
          const { payload } = await jwtVerify(bearer, jwks, { issuer: t.issuer, audience: needed.aud });
          roles = (payload.roles as string[] | undefined) ?? [];
        } else {
          const seen = await introspect(basic(needed.aud, needed.secret), bearer);
          if (!seen.body.active) throw new Error("inactive");
          roles = seen.body.roles;
        }
      } catch {
        res.writeHead(401).end();
        return;
      }
      res.writeHead(roles.includes(needed.role) ? 200 : 403).end();
    };
    server = createServer((req, res) => void handle(req, res));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(
    () =>
      new Promise<void>((r) => {
        server.close(() => {
          r();
        });
      }),
  );

  it("accepts a token for itself with the role, refuses another API's token and a token without the role", async () => {
    const { client, secret } = await makeClient(t, { apiScopes: { [ORDERS]: ["orders:read"], [BILLING]: ["invoices:read"] } });
    const auth = basic(client.id, secret!);
    const forOrders = (await token(t, { grant_type: "client_credentials", resource: ORDERS }, { auth })).body.access_token;
    const forBilling = (await token(t, { grant_type: "client_credentials", resource: BILLING }, { auth })).body.access_token;
    const call = (path: string, at: string) => fetch(url + path, { headers: { authorization: `Bearer ${at}` } }).then((r) => r.status);
    expect(await call("/orders", forOrders)).toBe(403); // no role yet
    expect(await call("/orders", forBilling)).toBe(401); // not for this API
    await t.api(`/management/v1/clients/${client.id}/roles`, { method: "PUT", json: { [ORDERS]: ["viewer"], [BILLING]: ["clerk"] } });
    const withRole = (await token(t, { grant_type: "client_credentials", resource: ORDERS }, { auth })).body.access_token;
    expect(await call("/orders", withRole)).toBe(200);
    // Introspection answers the roles as they are now, so the opaque token's holder gets in at once.
    expect(await call("/billing", forBilling)).toBe(200);
  });

  it("introspection by the API: active only for tokens whose audience includes it; a wrong secret is invalid_client", async () => {
    const { client, secret } = await makeClient(t, { apiScopes: { [ORDERS]: ["orders:read"] } });
    const auth = basic(client.id, secret!);
    const mine = (await token(t, { grant_type: "client_credentials", resource: ORDERS }, { auth })).body.access_token;
    const notMine = (await token(t, { grant_type: "client_credentials" }, { auth })).body.access_token;
    const asApi = basic(ORDERS, apiSecret);
    expect((await introspect(asApi, mine)).body).toMatchObject({ active: true, aud: ORDERS, client_id: client.id, scope: "orders:read" });
    expect((await introspect(asApi, notMine)).body).toEqual({ active: false });
    const wrong = await introspect(basic(ORDERS, "wrong"), mine);
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("invalid_client");
    // The client keeps introspecting its own tokens.
    expect((await introspect(auth, mine)).body.active).toBe(true);
  });

  it("an API's URI identifier in HTTP Basic: form-urlencoded (RFC 6749 2.3.1) or sent as is, both work; a wrong secret either way is invalid_client", async () => {
    const { client, secret } = await makeClient(t, { apiScopes: { [ORDERS]: ["orders:read"] } });
    const mine = (await token(t, { grant_type: "client_credentials", resource: ORDERS }, { auth: basic(client.id, secret!) })).body.access_token;
    const raw = (id: string, s: string) => "Basic " + Buffer.from(`${id}:${s}`).toString("base64");
    expect(basic(ORDERS, apiSecret)).not.toBe(raw(ORDERS, apiSecret));
    expect((await introspect(basic(ORDERS, apiSecret), mine)).body).toMatchObject({ active: true, aud: ORDERS });
    expect((await introspect(raw(ORDERS, apiSecret), mine)).body).toMatchObject({ active: true, aud: ORDERS });
    const wrong = await introspect(raw(ORDERS, "wrong"), mine);
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("invalid_client");
  });
});

describe("introspection by an API with private_key_jwt", () => {
  it("an API with registered keys signs its own assertion; a replayed or foreign-signed one is invalid_client", async () => {
    const { publicKey, privateKey } = await generateKeyPair("ES256");
    const jwk = { ...(await exportJWK(publicKey)), kid: "api-1", use: "sig" };
    const patched = await t.api(`/management/v1/apis/${orders.apiId}`, { method: "PATCH", json: { jwks: { keys: [jwk] } } });
    expect(patched.status).toBe(200);
    expect((await json(patched)).jwks.keys[0].kid).toBe("api-1");
    const bad = await t.api(`/management/v1/apis/${orders.apiId}`, { method: "PATCH", json: { jwks: { keys: [{ kty: "oct", k: "c2VjcmV0" }] } } });
    expect(bad.status).toBe(400);

    const { client, secret } = await makeClient(t, { apiScopes: { [ORDERS]: ["orders:read"] } });
    const at = (await token(t, { grant_type: "client_credentials", resource: ORDERS }, { auth: basic(client.id, secret!) })).body.access_token;
    const sign = (key: CryptoKey, jti: string) =>
      new SignJWT({ jti })
        .setProtectedHeader({ alg: "ES256", kid: "api-1" })
        .setIssuer(ORDERS)
        .setSubject(ORDERS)
        .setAudience(t.issuer + "/oauth/v2/introspect")
        .setIssuedAt()
        .setExpirationTime("2m")
        .sign(key);
    const call = async (assertion: string) => {
      const res = await fetch(t.baseUrl + "/oauth/v2/introspect", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token: at, client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", client_assertion: assertion }).toString(),
      });
      return { status: res.status, body: await res.json() };
    };
    const assertion = await sign(privateKey, "one");
    expect((await call(assertion)).body).toMatchObject({ active: true, aud: ORDERS });
    const replay = await call(assertion);
    expect(replay.status).toBe(401);
    expect(replay.body.error).toBe("invalid_client");
    const other = await generateKeyPair("ES256");
    expect((await call(await sign(other.privateKey, "two"))).body.error).toBe("invalid_client");
  });
});

describe("resource indicators at the jwt-bearer and token-exchange grants", () => {
  it("jwt-bearer: a machine user's token for an API the client may use, with its scopes there and the user's roles; unknown or not allowed is invalid_target", async () => {
    const keys = await generateKeyPair("ES256");
    const machine = await makeUser(t, { type: "machine", name: "robot", email: null, givenName: null, familyName: null });
    const kid = (await insertMachineKey(t.inst.db, machine.id, await exportJWK(keys.publicKey), "ES256")).id;
    const assertion = () =>
      new SignJWT({ jti: crypto.randomUUID() }).setProtectedHeader({ alg: "ES256", kid }).setIssuer(machine.id).setSubject(machine.id).setAudience(t.issuer).setExpirationTime("5m").sign(keys.privateKey);
    expect((await t.api(`/management/v1/users/${machine.id}/roles`, { method: "PUT", json: { [ORDERS]: ["viewer"] } })).status).toBe(200);
    const { client, secret } = await makeClient(t, { grantTypes: ["urn:ietf:params:oauth:grant-type:jwt-bearer"], apiScopes: { [ORDERS]: ["orders:read"] } });
    const auth = basic(client.id, secret!);
    const GT = "urn:ietf:params:oauth:grant-type:jwt-bearer";

    const r = await token(t, { grant_type: GT, assertion: await assertion(), resource: ORDERS, scope: "openid" }, { auth });
    expect(r.status).toBe(200);
    expect(r.body.scope).toBe("openid orders:read");
    expect((await verify(t, r.body.access_token)).payload).toMatchObject({ aud: ORDERS, sub: machine.id, scope: "openid orders:read", roles: ["viewer"] });
    // The API scope alone names its API too; without either the token is for the client as before.
    expect((await verify(t, (await token(t, { grant_type: GT, assertion: await assertion(), scope: "orders:read" }, { auth })).body.access_token)).payload.aud).toBe(ORDERS);
    expect((await verify(t, (await token(t, { grant_type: GT, assertion: await assertion(), scope: "openid" }, { auth })).body.access_token)).payload.aud).toBe(client.id);

    for (const resource of [BILLING, "https://api.example/unknown", "relative/path", `${ORDERS}#frag`]) {
      const bad = await token(t, { grant_type: GT, assertion: await assertion(), resource }, { auth });
      expect([resource, bad.status, bad.body.error]).toEqual([resource, 400, "invalid_target"]);
    }
    // Without a client, the machine user is its own client and may use no API.
    expect((await token(t, { grant_type: GT, assertion: await assertion(), resource: ORDERS })).body.error).toBe("invalid_target");
  });

  it("token exchange: resource names the API of the new token (aud, its scopes, the subject's roles); its refresh token stays with that API; unknown or not allowed is invalid_target", async () => {
    await updateSettings(t.inst, { features: { ...(await getSettings(t.inst)).features, tokenExchange: true } });
    const user = await makeUser(t);
    expect((await t.api(`/management/v1/users/${user.id}/roles`, { method: "PUT", json: { [ORDERS]: ["admin"] } })).status).toBe(200);
    const { client, secret } = await makeClient(t, {
      grantTypes: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:token-exchange"],
      apiScopes: { [ORDERS]: ["orders:read", "orders:write"] },
    });
    const auth = basic(client.id, secret!);
    const { code } = await makeCode(t, { client, user, scopes: ["openid", "offline_access"] });
    const subject = (await token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb" }, { auth })).body.access_token;
    const TT = "urn:ietf:params:oauth:token-type:access_token";
    const exchange = (p: Record<string, string>) =>
      token(t, { grant_type: "urn:ietf:params:oauth:grant-type:token-exchange", subject_token: subject, subject_token_type: TT, requested_token_type: "urn:ietf:params:oauth:token-type:jwt", ...p }, { auth });

    const r = await exchange({ resource: ORDERS, scope: "openid offline_access orders:read" });
    expect(r.status).toBe(200);
    expect(r.body.scope).toBe("openid offline_access orders:read");
    const claims = (await verify(t, r.body.access_token)).payload;
    expect(claims).toMatchObject({ aud: ORDERS, sub: user.id, roles: ["admin"] });
    expect(claims.exp! - claims.iat!).toBe(600);
    const refreshed = await token(t, { grant_type: "refresh_token", refresh_token: r.body.refresh_token }, { auth });
    expect(refreshed.status).toBe(200);
    expect((await verify(t, refreshed.body.access_token)).payload).toMatchObject({ aud: ORDERS, scope: "openid offline_access orders:read" });

    for (const resource of [BILLING, "https://api.example/unknown", "relative/path", `${ORDERS}#frag`]) {
      const bad = await exchange({ resource });
      expect([resource, bad.status, bad.body.error]).toEqual([resource, 400, "invalid_target"]);
    }
    // An API scope the client may not have there is invalid_scope, as at the other grants.
    expect((await exchange({ resource: ORDERS, scope: "invoices:read" })).body.error).toBe("invalid_scope");
  });
});

describe("discovery and deletion", () => {
  it("discovery lists every API scope and roles in scopes_supported", async () => {
    const doc = await json(await fetch(t.baseUrl + "/.well-known/openid-configuration"));
    expect(doc.scopes_supported).toEqual(expect.arrayContaining(["openid", "roles", "orders:read", "orders:write", "invoices:read"]));
  });

  it("deleting an API: its tokens stop introspecting as active, clients stop naming it, its roles go", async () => {
    const api = await createApi({ identifier: "https://api.example/doomed", name: "Doomed", scopes: [{ name: "doom" }], roles: [{ key: "r", name: "R" }] });
    const { client, secret } = await makeClient(t, { apiScopes: { [api.identifier]: ["doom"] } });
    const user = await makeUser(t);
    await t.api(`/management/v1/users/${user.id}/roles`, { method: "PUT", json: { [api.identifier]: ["r"] } });
    const auth = basic(client.id, secret!);
    const at = (await token(t, { grant_type: "client_credentials", resource: api.identifier }, { auth })).body.access_token;
    expect((await introspect(auth, at)).body.active).toBe(true);

    expect((await t.api(`/management/v1/apis/${api.apiId}`, { method: "DELETE" })).status).toBe(204);
    expect((await introspect(auth, at)).body.active).toBe(false);
    expect((await json(await t.api(`/management/v1/clients/${client.id}`))).apiScopes).toEqual({});
    expect(await json(await t.api(`/management/v1/users/${user.id}/roles`))).toEqual({});
    expect((await token(t, { grant_type: "client_credentials", resource: api.identifier }, { auth })).body.error).toBe("invalid_target");
  });
});
