import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "@/lib/store/users";
import { insertUser } from "@/lib/store/users";
import { startTestInstance, type TestInstance } from "./harness";
import { Browser, makeUser, REDIRECT } from "./authorize-support";
import { delivered, makeRp, oidc, type Rp } from "./oidc-rp-support";

/**
 * The `claims` request parameter (OpenID Connect Core 5.5), driven by openid-client: claims asked
 * for by name are delivered where asked (ID token or userinfo) without the matching scope, kept
 * by the grant across refreshes, and a request for a specific `sub` is never answered for
 * another user (5.5.1).
 */
let t: TestInstance;
let rp: Rp;
let implicitRp: Rp;
let alice: User;
let bob: User;
const PW = "correct horse battery";

beforeAll(async () => {
  t = await startTestInstance();
  rp = await makeRp(t);
  implicitRp = await makeRp(t, {}, "id_token");
  alice = await insertUser(
    t.inst.db,
    {
      type: "human",
      username: "alice",
      email: "alice@mail.example",
      emailVerified: true,
      givenName: "Alice",
      familyName: "Liddell",
      phone: "+41 44 123 45 67",
      phoneVerified: false,
    },
    PW,
  );
  bob = await makeUser(t, "bob");
});
afterAll(() => t.close());

async function jwks() {
  return createLocalJWKSet((await (await fetch(`${t.issuer}/oauth/v2/keys`)).json()) as JSONWebKeySet);
}

/** Runs the code flow through openid-client; the Browser signs in (or reuses its session). */
async function codeFlow(b: Browser, params: Record<string, string>, signInAs?: string) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(rp.config, {
    redirect_uri: REDIRECT,
    scope: "openid",
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    ...params,
  });
  const start = await b.authorizeRaw(url.search);
  const done = signInAs ? await b.signIn(start, signInAs, PW) : start;
  const d = await delivered(done);
  return { d, tokens: () => oidc.authorizationCodeGrant(rp.config, d.toRp, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true }), state };
}

describe("claims requested by name", () => {
  it("scope openid alone: an essential userinfo name and an id_token email are delivered where asked, and refreshes keep them", async () => {
    const b = new Browser(t);
    const claims = JSON.stringify({ userinfo: { name: { essential: true } }, id_token: { email: null, email_verified: { essential: false } } });
    const flow = await codeFlow(b, { scope: "openid offline_access", claims }, "alice");
    const tokens = await flow.tokens();
    const id = tokens.claims()!;
    expect(id.sub).toBe(alice.id);
    expect(id.email).toBe("alice@mail.example");
    expect(id.email_verified).toBe(true);
    expect(id.name).toBeUndefined();
    const info = await oidc.fetchUserInfo(rp.config, tokens.access_token, alice.id);
    expect(info).toEqual({ sub: alice.id, name: "Alice Liddell" });

    const refreshed = await oidc.refreshTokenGrant(rp.config, tokens.refresh_token!);
    const id2 = refreshed.claims()!;
    expect(id2.sub).toBe(alice.id);
    expect(id2.email).toBe("alice@mail.example");
    expect(id2.name).toBeUndefined();
    expect(await oidc.fetchUserInfo(rp.config, refreshed.access_token, alice.id)).toEqual({ sub: alice.id, name: "Alice Liddell" });
  });

  it("without the parameter, scope openid alone returns no name (the claim is what made the difference)", async () => {
    const b = new Browser(t);
    const tokens = await (await codeFlow(b, {}, "alice")).tokens();
    expect(await oidc.fetchUserInfo(rp.config, tokens.access_token, alice.id)).toEqual({ sub: alice.id });
    expect(tokens.claims()!.email).toBeUndefined();
  });

  it("claims of a scope and of the parameter add up; unknown claims, unknown members and non-essential acr are ignored", async () => {
    const b = new Browser(t);
    const claims = JSON.stringify({
      userinfo: { phone_number: { essential: true, purpose: "to call you" }, shoe_size: { essential: true }, acr: null },
      id_token: { given_name: { value: "Somebody else" }, favourite_colour: null, acr: { essential: false, values: ["urn:x"] } },
      something_else: { foo: 1 },
    });
    const tokens = await (await codeFlow(b, { scope: "openid email", claims }, "alice")).tokens();
    const id = tokens.claims()!;
    // value for a claim other than sub asks, it does not change what the user's claim is.
    expect(id.given_name).toBe("Alice");
    expect(id.email).toBeUndefined(); // scope claims stay out of an ID token issued with an access token
    expect(id.favourite_colour).toBeUndefined();
    // A non-essential acr request changes nothing: acr says what the sign-in achieved (a password).
    expect(id.acr).toBe("urn:torii:acr:pwd");
    const info = await oidc.fetchUserInfo(rp.config, tokens.access_token, alice.id);
    expect(info).toEqual({ sub: alice.id, email: "alice@mail.example", email_verified: true, phone_number: "+41 44 123 45 67" });
  });

  it("a claim the user has no value for is left out, even when essential", async () => {
    const b = new Browser(t);
    const claims = JSON.stringify({ userinfo: { address: { essential: true }, nickname: { essential: true } } });
    const tokens = await (await codeFlow(b, { claims }, "alice")).tokens();
    expect(await oidc.fetchUserInfo(rp.config, tokens.access_token, alice.id)).toEqual({ sub: alice.id });
  });

  it("the parameter works as a form parameter of a POST authorization request too", async () => {
    const b = new Browser(t);
    await b.signIn(await b.authorize({ client_id: rp.client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid" }), "alice", PW);
    const verifier = oidc.randomPKCECodeVerifier();
    const form = new URLSearchParams({
      client_id: rp.client.id,
      redirect_uri: REDIRECT,
      response_type: "code",
      scope: "openid",
      state: "post-1",
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      claims: JSON.stringify({ id_token: { family_name: { essential: true } } }),
    });
    const res = await b.authorizeRaw("", { method: "POST", body: form.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
    const d = await delivered(res);
    const tokens = await oidc.authorizationCodeGrant(rp.config, d.toRp, { pkceCodeVerifier: verifier, expectedState: "post-1" });
    expect(tokens.claims()!.family_name).toBe("Liddell");
  });

  it("implicit id_token token: id_token claims in the ID token, userinfo claims at userinfo", async () => {
    const b = new Browser(t);
    const claims = JSON.stringify({ id_token: { preferred_username: null }, userinfo: { phone_number_verified: null } });
    const start = await b.authorize({ client_id: rp.client.id, redirect_uri: REDIRECT, response_type: "id_token token", scope: "openid", nonce: "n-i", state: "s-i", claims });
    const d = await delivered(await b.signIn(start, "alice", PW));
    expect(d.mode).toBe("fragment");
    const { payload } = await jwtVerify(d.params.get("id_token")!, await jwks(), { issuer: t.issuer, audience: rp.client.id });
    expect(payload.preferred_username).toMatch(/^alice@/);
    expect(payload.phone_number_verified).toBeUndefined();
    expect(await oidc.fetchUserInfo(rp.config, d.params.get("access_token")!, alice.id)).toEqual({ sub: alice.id, phone_number_verified: false });
  });

  it("implicit id_token (openid-client's implicitAuthentication): requested claims in the ID token", async () => {
    const b = new Browser(t);
    const nonce = oidc.randomNonce();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(implicitRp.config, {
      redirect_uri: REDIRECT,
      scope: "openid",
      nonce,
      state,
      response_mode: "form_post",
      claims: JSON.stringify({ id_token: { phone_number: { essential: true } } }),
    });
    const d = await delivered(await b.signIn(await b.authorizeRaw(url.search), "alice", PW));
    expect(d.mode).toBe("form_post");
    const id = await oidc.implicitAuthentication(implicitRp.config, d.toRp, nonce, { expectedState: state });
    expect(id.sub).toBe(alice.id);
    expect(id.phone_number).toBe("+41 44 123 45 67");
  });
});

describe("a request for a specific sub (Core 5.5.1)", () => {
  const subClaims = (sub: string) => JSON.stringify({ id_token: { sub: { value: sub } } });

  it("is answered silently from the matching session", async () => {
    const b = new Browser(t);
    await b.signIn(await b.authorize({ client_id: rp.client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid" }), "alice", PW);
    const tokens = await (await codeFlow(b, { claims: subClaims(alice.id), prompt: "none" })).tokens();
    expect(tokens.claims()!.sub).toBe(alice.id);
  });

  it("is never answered for another signed-in user: login_required with prompt=none, the login page otherwise", async () => {
    const b = new Browser(t);
    await b.signIn(await b.authorize({ client_id: rp.client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid" }), "alice", PW);
    const none = await codeFlow(b, { claims: subClaims(bob.id), prompt: "none" });
    expect(none.d.params.get("error")).toBe("login_required");
    expect(none.d.params.get("code")).toBeNull();
    await expect(none.tokens()).rejects.toMatchObject({ error: "login_required" });

    const url = oidc.buildAuthorizationUrl(rp.config, { redirect_uri: REDIRECT, scope: "openid", state: "i-1", claims: subClaims(bob.id) });
    const interactive = await b.authorizeRaw(url.search);
    expect(interactive.status).toBe(302);
    expect(interactive.headers.get("location")).toMatch(/^\/ui\/login\?authRequest=/);
  });

  it("signing in as another user than the requested sub ends in login_required, not in tokens for that user", async () => {
    const b = new Browser(t);
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(rp.config, {
      redirect_uri: REDIRECT,
      scope: "openid",
      state: "sub-1",
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      claims: JSON.stringify({ userinfo: { sub: { value: bob.id } } }),
    });
    const start = await b.authorizeRaw(url.search);
    // With no session of bob, the login page is shown (nothing is prefilled from the sub).
    expect(start.headers.get("location")).toMatch(/^\/ui\/login\?authRequest=/);
    const d = await delivered(await b.signIn(start, "alice", PW));
    expect(d.params.get("error")).toBe("login_required");
    expect(d.params.get("state")).toBe("sub-1");
    await expect(oidc.authorizationCodeGrant(rp.config, d.toRp, { pkceCodeVerifier: verifier, expectedState: "sub-1" })).rejects.toMatchObject({
      error: "login_required",
    });

    // The same request signed in as bob succeeds, for bob.
    const b2 = new Browser(t);
    const verifier2 = oidc.randomPKCECodeVerifier();
    const url2 = oidc.buildAuthorizationUrl(rp.config, {
      redirect_uri: REDIRECT,
      scope: "openid",
      state: "sub-2",
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier2),
      code_challenge_method: "S256",
      claims: JSON.stringify({ id_token: { sub: { values: [bob.id, "someone-else"] } } }),
    });
    const d2 = await delivered(await b2.signIn(await b2.authorizeRaw(url2.search), "bob", PW));
    const tokens = await oidc.authorizationCodeGrant(rp.config, d2.toRp, { pkceCodeVerifier: verifier2, expectedState: "sub-2" });
    expect(tokens.claims()!.sub).toBe(bob.id);
  });

  it("with two sessions, the one of the requested sub is chosen", async () => {
    const b = new Browser(t);
    const plain = { client_id: rp.client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid" };
    await b.signIn(await b.authorize(plain), "alice", PW);
    await b.signIn(await b.authorize({ ...plain, prompt: "login" }), "bob", PW);
    const tokens = await (await codeFlow(b, { claims: subClaims(bob.id), prompt: "none" })).tokens();
    expect(tokens.claims()!.sub).toBe(bob.id);
  });
});

describe("a wrong claims parameter is invalid_request with the state, refused before anything else happens", () => {
  const wrong: [string, string][] = [
    ["malformed JSON", '{"userinfo": {"name": '],
    ["not an object", '["name"]'],
    ["a JSON string", '"name"'],
    ["userinfo not an object", '{"userinfo": "name"}'],
    ["id_token an array", '{"id_token": ["email"]}'],
    ["a claim request that is neither null nor an object", '{"userinfo": {"name": true}}'],
    ["essential not a boolean", '{"userinfo": {"name": {"essential": "yes"}}}'],
    ["values not an array", '{"id_token": {"email": {"values": "a@b"}}}'],
    ["a sub value that is not a string", '{"id_token": {"sub": {"value": 42}}}'],
    ["contradictory sub values", '{"id_token": {"sub": {"value": "a"}}, "userinfo": {"sub": {"value": "b"}}}'],
    ["longer than 4096 characters", JSON.stringify({ userinfo: { name: { essential: true, purpose: "x".repeat(4100) } } })],
  ];
  it.each(wrong)("%s", async (_name, claims) => {
    const b = new Browser(t);
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(rp.config, { redirect_uri: REDIRECT, scope: "openid", state, claims });
    const d = await delivered(await b.authorizeRaw(url.search));
    expect(d.mode).toBe("query");
    expect(d.params.get("error")).toBe("invalid_request");
    expect(d.params.get("error_description")).toMatch(/claims/);
    await expect(oidc.authorizationCodeGrant(rp.config, d.toRp, { expectedState: state })).rejects.toMatchObject({ error: "invalid_request" });
    // Refused before any authorization request was stored or any cookie set.
    expect(b.cookies.size).toBe(0);
  });

  it("userinfo claims with a response type that issues no access token are invalid_request (Core 5.5)", async () => {
    const b = new Browser(t);
    const nonce = oidc.randomNonce();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(implicitRp.config, { redirect_uri: REDIRECT, scope: "openid", nonce, state, claims: '{"userinfo":{"name":null}}' });
    const d = await delivered(await b.authorizeRaw(url.search));
    expect(d.mode).toBe("fragment");
    await expect(oidc.implicitAuthentication(implicitRp.config, d.toRp, nonce, { expectedState: state })).rejects.toMatchObject({ error: "invalid_request" });
  });

  it("an essential acr with values Torii does not have cannot be met: unmet_authentication_requirements (Core 5.5.1.1, and the errata's error code)", async () => {
    const b = new Browser(t);
    const state = oidc.randomState();
    const claims = JSON.stringify({ id_token: { acr: { essential: true, values: ["urn:mace:incommon:iap:silver"] } } });
    const url = oidc.buildAuthorizationUrl(rp.config, { redirect_uri: REDIRECT, scope: "openid", state, claims, response_mode: "form_post" });
    const d = await delivered(await b.authorizeRaw(url.search));
    expect(d.mode).toBe("form_post");
    await expect(oidc.authorizationCodeGrant(rp.config, d.toRp, { expectedState: state })).rejects.toMatchObject({ error: "unmet_authentication_requirements" });
  });

  it("an acr value that is not a string is a malformed request: invalid_request (found by a probe: it was unmet_authentication_requirements)", async () => {
    for (const acr of [{ essential: true, values: [1, {}] }, { essential: true, value: 5 }, { essential: true, values: ["urn:torii:acr:pwd", null] }]) {
      const b = new Browser(t);
      const state = oidc.randomState();
      const claims = JSON.stringify({ id_token: { acr } });
      const url = oidc.buildAuthorizationUrl(rp.config, { redirect_uri: REDIRECT, scope: "openid", state, claims, response_mode: "form_post" });
      const d = await delivered(await b.authorizeRaw(url.search));
      await expect(oidc.authorizationCodeGrant(rp.config, d.toRp, { expectedState: state }), JSON.stringify(acr)).rejects.toMatchObject({ error: "invalid_request" });
    }
  });
});

describe("discovery", () => {
  it("advertises the claims parameter, and openid-client reads it", () => {
    expect(rp.config.serverMetadata().claims_parameter_supported).toBe(true);
  });
});


