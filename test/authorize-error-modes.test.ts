import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestInstance, type TestInstance } from "./harness";
import { Browser, makeClient, makeUser, REDIRECT } from "./authorize-support";
import { delivered, makeRp, oidc, unsignedRequestObject, type Delivered, type Rp } from "./oidc-rp-support";

/**
 * Every error the authorization endpoint sends to a client's redirect URI, in every response
 * mode: the one the client asked for (query, fragment, form_post), or the default of the response
 * type (query for code, fragment for the implicit types, which never answer in the query). Each
 * response is then read by openid-client as a relying party would.
 */
let t: TestInstance;
let rp: Rp;
let implicitRp: Rp;
let publicId: string;
let codeOnlyId: string;
let twoSessions: Browser;
let bobId: string;
const challenge = createHash("sha256").update("v".repeat(50)).digest("base64url");

beforeAll(async () => {
  t = await startTestInstance();
  rp = await makeRp(t);
  implicitRp = await makeRp(t, {}, "id_token");
  publicId = (await makeClient(t, { authMethod: "none" })).id;
  codeOnlyId = (await makeClient(t, { responseTypes: ["code"] })).id;
  await makeUser(t, "alice");
  bobId = (await makeUser(t, "bob")).id;
  twoSessions = new Browser(t);
  const plain = { client_id: rp.client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid" };
  await twoSessions.signIn(await twoSessions.authorize(plain), "alice", "correct horse battery");
  await twoSessions.signIn(await twoSessions.authorize({ ...plain, prompt: "login" }), "bob", "correct horse battery");
  // auth_time has whole seconds, and a sign-in in the second a request is made counts as made
  // during it (it satisfies max_age=0): let that second pass before the max_age cases.
  await new Promise((r) => setTimeout(r, 1100));
});
afterAll(() => t.close());

type Case = {
  name: string;
  /** The parameters besides client_id, redirect_uri, state and response_mode; null removes one. */
  params: Record<string, string | null>;
  error: string;
  client?: "public" | "codeOnly";
  /** Appended once more to the query: a repeated parameter. */
  repeat?: [string, string];
  browser?: () => Browser;
};

const code = { response_type: "code", scope: "openid" };
const idToken = { response_type: "id_token", scope: "openid", nonce: "n-1" };
const idTokenToken = { response_type: "id_token token", scope: "openid", nonce: "n-1" };

const CASES: Case[] = [
  { name: "request object", params: { ...code, request: unsignedRequestObject({ scope: "openid" }) }, error: "request_not_supported" },
  { name: "request object (implicit)", params: { ...idToken, request: unsignedRequestObject({ scope: "openid" }) }, error: "request_not_supported" },
  { name: "request_uri", params: { ...code, request_uri: "https://rp.example/r.jwt" }, error: "request_uri_not_supported" },
  { name: "request_uri (implicit)", params: { ...idTokenToken, request_uri: "https://rp.example/r.jwt" }, error: "request_uri_not_supported" },
  { name: "repeated parameter", params: code, repeat: ["scope", "openid email"], error: "invalid_request" },
  { name: "repeated parameter (implicit)", params: idToken, repeat: ["nonce", "n-2"], error: "invalid_request" },
  { name: "missing response_type", params: { ...code, response_type: null }, error: "invalid_request" },
  { name: "unsupported response_type", params: { ...code, response_type: "token" }, error: "unsupported_response_type" },
  { name: "response type not registered for the client", params: idToken, client: "codeOnly", error: "unauthorized_client" },
  { name: "missing scope", params: { ...code, scope: null }, error: "invalid_request" },
  { name: "missing scope (implicit)", params: { ...idToken, scope: null }, error: "invalid_request" },
  { name: "scope without openid", params: { ...code, scope: "profile" }, error: "invalid_scope" },
  { name: "malformed scope", params: { ...code, scope: 'openid a"b' }, error: "invalid_scope" },
  { name: "malformed scope (implicit)", params: { ...idTokenToken, scope: "openid a\\b" }, error: "invalid_scope" },
  { name: "nonce too long", params: { ...code, nonce: "n".repeat(600) }, error: "invalid_request" },
  { name: "implicit without nonce", params: { ...idToken, nonce: null }, error: "invalid_request" },
  { name: "implicit (id_token token) without nonce", params: { ...idTokenToken, nonce: null }, error: "invalid_request" },
  { name: "code_challenge_method without code_challenge", params: { ...code, code_challenge_method: "S256" }, error: "invalid_request" },
  { name: "plain PKCE", params: { ...code, code_challenge: challenge, code_challenge_method: "plain" }, error: "invalid_request" },
  { name: "malformed code_challenge", params: { ...code, code_challenge: "short", code_challenge_method: "S256" }, error: "invalid_request" },
  { name: "public client without PKCE", params: code, client: "public", error: "invalid_request" },
  { name: "unknown prompt", params: { ...code, prompt: "bogus" }, error: "invalid_request" },
  { name: "prompt none combined", params: { ...idToken, prompt: "none login" }, error: "invalid_request" },
  { name: "max_age not a number", params: { ...code, max_age: "soon" }, error: "invalid_request" },
  { name: "login_hint too long", params: { ...code, login_hint: "a".repeat(600) }, error: "invalid_request" },
  { name: "invalid id_token_hint", params: { ...idToken, id_token_hint: "not.a.jwt" }, error: "invalid_request" },
  { name: "claims not JSON", params: { ...code, claims: "{userinfo" }, error: "invalid_request" },
  { name: "claims of the wrong shape", params: { ...idTokenToken, claims: '{"id_token": ["email"]}' }, error: "invalid_request" },
  { name: "userinfo claims without an access token", params: { ...idToken, claims: '{"userinfo": {"name": null}}' }, error: "invalid_request" },
  { name: "essential acr that cannot be met", params: { ...code, claims: '{"id_token": {"acr": {"essential": true, "value": "urn:x"}}}' }, error: "unmet_authentication_requirements" },
  { name: "prompt=none without a session", params: { ...code, prompt: "none" }, error: "login_required" },
  { name: "prompt=none without a session (implicit)", params: { ...idToken, prompt: "none" }, error: "login_required" },
  // The login hint picks alice's session, whose sign-in is older than max_age allows.
  { name: "prompt=none with max_age the session does not meet", params: { ...code, prompt: "none", max_age: "0", login_hint: "alice" }, error: "login_required", browser: () => twoSessions },
  // OIDC Core 3.1.2.6: the user would have to choose between the sessions.
  { name: "prompt=none with two sessions", params: { ...idTokenToken, prompt: "none" }, error: "account_selection_required", browser: () => twoSessions },
];

const REQUESTED = [undefined, "query", "fragment", "form_post"] as const;

/** The mode the answer must come in: as asked, except that implicit responses are never in the query. */
function expectedMode(responseType: string | null | undefined, requested: (typeof REQUESTED)[number]): Delivered["mode"] {
  const implicit = responseType === "id_token" || responseType === "id_token token";
  if (requested === "form_post" || requested === "fragment") return requested;
  return implicit ? "fragment" : "query";
}

/** What openid-client makes of the delivered error: it checks the state and throws AuthorizationResponseError. */
async function rpReads(d: Delivered, responseType: string | null | undefined, state: string): Promise<unknown> {
  const implicit = responseType === "id_token" || responseType === "id_token token";
  if (implicit) return oidc.implicitAuthentication(implicitRp.config, d.toRp, "n-1", { expectedState: state });
  if (d.mode === "fragment") throw Object.assign(new Error("read from the fragment"), { error: d.params.get("error") }); // openid-client reads codes from the query or a POST only
  return oidc.authorizationCodeGrant(rp.config, d.toRp, { expectedState: state });
}

describe.each(REQUESTED)("authorization errors with response_mode=%s", (requested) => {
  it.each(CASES)("$name -> $error", async (c) => {
    const clientId = c.client === "public" ? publicId : c.client === "codeOnly" ? codeOnlyId : rp.client.id;
    const state = oidc.randomState();
    const q = new URLSearchParams({ client_id: clientId, redirect_uri: REDIRECT, state });
    for (const [k, v] of Object.entries(c.params)) if (v !== null) q.set(k, v);
    if (requested) q.set("response_mode", requested);
    if (c.repeat) q.append(...c.repeat);
    const b = c.browser?.() ?? new Browser(t);
    const res = await b.authorizeRaw("?" + q.toString());
    const d = await delivered(res);
    expect(d.mode).toBe(expectedMode(c.params.response_type, requested));
    expect(d.params.get("error")).toBe(c.error);
    expect(d.params.get("error_description")).toBeTruthy();
    expect(d.params.get("state")).toBe(state);
    for (const k of ["code", "id_token", "access_token"]) expect(d.params.get(k)).toBeNull();
    if (d.mode !== "query") expect(res.headers.get("location") ?? "").not.toContain("?");
    await expect(rpReads(d, c.params.response_type, state)).rejects.toMatchObject({ error: c.error });
  });

  it("a sign-in as another user than the requested sub -> login_required (from the login callback)", async () => {
    const b = new Browser(t);
    const state = oidc.randomState();
    const q = new URLSearchParams({ client_id: rp.client.id, redirect_uri: REDIRECT, state, response_type: "code", scope: "openid", claims: JSON.stringify({ id_token: { sub: { value: bobId } } }) });
    if (requested) q.set("response_mode", requested);
    const d = await delivered(await b.signIn(await b.authorizeRaw("?" + q.toString()), "alice", "correct horse battery"));
    expect(d.mode).toBe(expectedMode("code", requested));
    expect(d.params.get("error")).toBe("login_required");
    expect(d.params.get("state")).toBe(state);
    expect(d.params.get("code")).toBeNull();
    await expect(rpReads(d, "code", state)).rejects.toMatchObject({ error: "login_required" });
  });
});

describe("a refused request object answers in the response mode it asked for", () => {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const cases: [string, Record<string, string>, string, Delivered["mode"]][] = [
    ["form_post only inside an unsigned object", { response_type: "code", request: unsignedRequestObject({ response_mode: "form_post" }) }, "request_not_supported", "form_post"],
    ["fragment inside the object wins over query outside", { response_type: "code", response_mode: "query", request: unsignedRequestObject({ response_mode: "fragment" }) }, "request_not_supported", "fragment"],
    ["form_post inside, implicit response type", { response_type: "id_token", nonce: "n-1", request: unsignedRequestObject({ response_mode: "form_post" }) }, "request_not_supported", "form_post"],
    ["query inside, implicit response type: still the fragment", { response_type: "id_token token", nonce: "n-1", request: unsignedRequestObject({ response_mode: "query" }) }, "request_not_supported", "fragment"],
    ["an unknown mode inside: the outer form_post", { response_type: "code", response_mode: "form_post", request: unsignedRequestObject({ response_mode: "jwt" }) }, "request_not_supported", "form_post"],
    ["a signed object (not verified, only read for the mode)", { response_type: "code", request: `${b64({ alg: "RS256", kid: "k" })}.${b64({ response_mode: "form_post" })}.c2ln` }, "request_not_supported", "form_post"],
    ["an encrypted object cannot be read: the outer mode", { response_type: "code", response_mode: "fragment", request: "eyJhbGciOiJSU0EtT0FFUCJ9.a.b.c.d" }, "request_not_supported", "fragment"],
    ["garbage: the default mode", { response_type: "code", request: "eyJ.x.y" }, "request_not_supported", "query"],
  ];
  it.each(cases)("%s", async (_name, params, error, mode) => {
    const state = oidc.randomState();
    const q = new URLSearchParams({ client_id: rp.client.id, redirect_uri: REDIRECT, scope: "openid", state, ...params });
    const d = await delivered(await new Browser(t).authorizeRaw("?" + q.toString()));
    expect(d.mode).toBe(mode);
    expect(d.params.get("error")).toBe(error);
    expect(d.params.get("state")).toBe(state);
  });

  it("nothing else in the object is used: its redirect_uri and state are ignored", async () => {
    const request = unsignedRequestObject({ response_mode: "form_post", redirect_uri: "https://evil.example/cb", state: "from-object", client_id: "other" });
    const q = new URLSearchParams({ client_id: rp.client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid", state: "outer", request });
    const res = await new Browser(t).authorizeRaw("?" + q.toString());
    const html = await res.clone().text();
    expect(html).not.toContain("evil.example");
    const d = await delivered(res);
    expect(d.mode).toBe("form_post");
    expect(d.params.get("state")).toBe("outer");
    // openid-client, using our discovery document, also learns that request objects are not accepted.
    const meta = rp.config.serverMetadata();
    expect(meta.request_parameter_supported).toBe(false);
    expect(meta.request_uri_parameter_supported).toBe(false);
    expect(meta.request_object_signing_alg_values_supported).toBeUndefined();
  });
});
