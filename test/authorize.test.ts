import { createHash } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditEvents, authorizationCodes, sessions } from "@/db/schema";
import { findUserAgent } from "@/lib/store/sessions";
import { getSettings } from "@/lib/store/settings";
import { sha256 } from "@/lib/crypto";
import { startTestInstance, type TestInstance } from "./harness";
import { authRequestOf, Browser, makeClient, makeUser, REDIRECT, redirectParams } from "./authorize-support";

let t: TestInstance;
let clientId: string;
let publicClientId: string;
let codeOnlyClientId: string;
const verifier = "v".repeat(50);
const challenge = createHash("sha256").update(verifier).digest("base64url");

beforeAll(async () => {
  t = await startTestInstance();
  clientId = (await makeClient(t)).id;
  publicClientId = (await makeClient(t, { authMethod: "none" })).id;
  codeOnlyClientId = (await makeClient(t, { responseTypes: ["code"] })).id;
  await makeUser(t, "alice");
  await makeUser(t, "bob+test");
});
afterAll(() => t.close());

const base = () => ({ client_id: clientId, redirect_uri: REDIRECT, response_type: "code", scope: "openid", state: "s-1" });

async function jwks() {
  const res = await t.api("/oauth/v2/keys", { auth: false });
  return createLocalJWKSet((await res.json()) as JSONWebKeySet);
}

describe("client and redirect URI are checked first, on our own page", () => {
  it.each([
    ["missing client_id", { redirect_uri: REDIRECT }, "client_id"],
    ["unknown client", { client_id: "nope", redirect_uri: REDIRECT }, "not registered"],
    ["missing redirect_uri", { client_id: "CLIENT" }, "redirect_uri"],
    ["unregistered redirect_uri", { client_id: "CLIENT", redirect_uri: REDIRECT + "/other" }, "redirect_uri"],
    ["redirect_uri differing only in case", { client_id: "CLIENT", redirect_uri: REDIRECT.toUpperCase() }, "redirect_uri"],
  ])("%s: HTTP 400 error page, never a redirect", async (_name, params, text) => {
    const p = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v === "CLIENT" ? clientId : v]));
    const res = await new Browser(t).authorize({ response_type: "code", scope: "openid", state: "x", ...p });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(await res.text()).toContain(text);
  });

  it("is localized by ui_locales", async () => {
    const res = await new Browser(t).authorize({ client_id: "nope", redirect_uri: REDIRECT, ui_locales: "fr-CA de" });
    const html = await res.text();
    expect(html).toContain('lang="fr"');
    expect(html).toContain("n’est pas enregistrée");
  });

  it("a repeated client_id is not trusted", async () => {
    const res = await new Browser(t).authorizeRaw(`?client_id=${clientId}&client_id=${clientId}&redirect_uri=${encodeURIComponent(REDIRECT)}`);
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
  });
});

describe("later errors go to the redirect URI with state", () => {
  const cases: [string, Record<string, string>, string][] = [
    ["request object", { request: "eyJ.x.y" }, "request_not_supported"],
    ["request_uri", { request_uri: "https://rp.example/r" }, "request_uri_not_supported"],
    ["missing response_type", { response_type: "" }, "invalid_request"],
    ["unsupported response_type", { response_type: "token" }, "unsupported_response_type"],
    ["missing scope", { scope: "" }, "invalid_request"],
    ["scope without openid", { scope: "profile email" }, "invalid_scope"],
    ["malformed scope", { scope: 'openid a"b' }, "invalid_scope"],
    ["prompt none combined", { prompt: "none login" }, "invalid_request"],
    ["unknown prompt", { prompt: "bogus" }, "invalid_request"],
    ["max_age not a number", { max_age: "-1" }, "invalid_request"],
    ["plain PKCE", { code_challenge: challenge, code_challenge_method: "plain" }, "invalid_request"],
    ["challenge without method", { code_challenge: challenge }, "invalid_request"],
    ["malformed challenge", { code_challenge: "short", code_challenge_method: "S256" }, "invalid_request"],
    ["invalid id_token_hint", { id_token_hint: "not.a.jwt" }, "invalid_request"],
  ];
  it.each(cases)("%s -> %s", async (_name, patch, error) => {
    // An empty value in the patch removes the parameter.
    const params = Object.fromEntries(Object.entries({ ...base(), ...patch }).filter(([k]) => patch[k] !== ""));
    const res = await new Browser(t).authorize(params);
    expect(res.status).toBe(302);
    const loc = new URL(res.headers.get("location")!);
    expect(loc.origin + loc.pathname).toBe(REDIRECT);
    expect(loc.searchParams.get("error")).toBe(error);
    expect(loc.searchParams.get("error_description")).toBeTruthy();
    expect(loc.searchParams.get("state")).toBe("s-1");
  });

  it("a repeated parameter is invalid_request", async () => {
    const q = new URLSearchParams(base());
    q.append("scope", "openid email");
    const res = await new Browser(t).authorizeRaw("?" + q.toString());
    expect(redirectParams(res).get("error")).toBe("invalid_request");
    expect(redirectParams(res).get("error_description")).toContain("scope");
  });

  it("unauthorized_client when the response type is not registered", async () => {
    const res = await new Browser(t).authorize({ ...base(), client_id: codeOnlyClientId, response_type: "id_token", nonce: "n" });
    const p = redirectParams(res);
    expect(p.get("error")).toBe("unauthorized_client");
    expect(new URL(res.headers.get("location")!).hash).not.toBe(""); // implicit default: fragment
  });

  it("implicit without nonce is invalid_request, in the fragment", async () => {
    const res = await new Browser(t).authorize({ ...base(), response_type: "id_token token" });
    const loc = new URL(res.headers.get("location")!);
    expect(loc.search).toBe("");
    expect(new URLSearchParams(loc.hash.slice(1)).get("error")).toBe("invalid_request");
  });

  it("a public client must use PKCE", async () => {
    const res = await new Browser(t).authorize({ ...base(), client_id: publicClientId });
    expect(redirectParams(res).get("error")).toBe("invalid_request");
    expect(redirectParams(res).get("error_description")).toContain("PKCE");
  });

  it("an unknown parameter is ignored and an invalid response_mode is ignored", async () => {
    const res = await new Browser(t).authorize({ ...base(), response_mode: "bogus", foo: "bar", prompt: "none" });
    const loc = new URL(res.headers.get("location")!);
    expect(loc.searchParams.get("error")).toBe("login_required");
    expect(loc.hash).toBe("");
  });

  it("response_mode=query is ignored for tokens (fragment stays)", async () => {
    const res = await new Browser(t).authorize({ ...base(), response_type: "id_token", nonce: "n", prompt: "none", response_mode: "query" });
    const loc = new URL(res.headers.get("location")!);
    expect(loc.search).toBe("");
    expect(new URLSearchParams(loc.hash.slice(1)).get("error")).toBe("login_required");
  });

  it("response_mode=form_post answers with an auto-posting page allowed only its own script", async () => {
    const res = await new Browser(t).authorize({ ...base(), prompt: "none", response_mode: "form_post" });
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain(`form-action ${REDIRECT}`);
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await res.text();
    expect(html).toContain(`<form method="post" action="${REDIRECT}">`);
    expect(html).toContain('name="error" value="login_required"');
    expect(html).toContain('name="state" value="s-1"');
    expect(html).toContain('<button type="submit">');
  });

  it("POST with a form body works like GET; another body type is refused on our page", async () => {
    const b = new Browser(t);
    const res = await b.authorizeRaw("", {
      method: "POST",
      body: new URLSearchParams({ ...base(), prompt: "none" }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(redirectParams(res).get("error")).toBe("login_required");
    const bad = await b.authorizeRaw("", { method: "POST", body: JSON.stringify(base()), headers: { "content-type": "application/json" } });
    expect(bad.status).toBe(400);
  });
});

describe("sign-in and the code flow", () => {
  it("issues a single-use code bound to the request, after a password sign-in", async () => {
    const b = new Browser(t);
    const start = await b.authorize({ ...base(), client_id: publicClientId, nonce: "n-1", code_challenge: challenge, code_challenge_method: "S256", scope: "openid email offline_access" });
    expect(start.headers.get("location")).toMatch(/^\/ui\/login\?authRequest=/);
    const ua = start.headers.getSetCookie().find((c) => c.startsWith("torii_ua="))!;
    expect(ua).toContain("HttpOnly");
    expect(ua).toContain("SameSite=Lax");
    const done = await b.signIn(start, "alice", "correct horse battery");
    const p = redirectParams(done);
    expect(p.get("state")).toBe("s-1");
    const code = p.get("code")!;
    expect(code.length).toBeGreaterThanOrEqual(43);
    const [row] = await t.inst.db.select().from(authorizationCodes).where(eq(authorizationCodes.codeHash, sha256(code)));
    expect(row).toMatchObject({ clientId: publicClientId, redirectUri: REDIRECT, codeChallenge: challenge, codeChallengeMethod: "S256", nonce: "n-1" });
    expect(row!.scopes).toEqual(["openid", "email", "offline_access"]);
    expect(row!.expiresAt.getTime() - row!.createdAt.getTime()).toBeLessThanOrEqual(61_000);
    expect(row!.sessionId).toBeTruthy();
    // The callback cannot be replayed for a second code.
    const again = await b.callback(`/oauth/v2/authorize/callback?id=${authRequestOf(start)}`);
    expect(again.status).toBe(400);
    const events = await t.inst.db.select().from(auditEvents).where(eq(auditEvents.action, "user.signin"));
    expect(events.length).toBeGreaterThan(0);
  });

  it("concurrent callbacks of one request: exactly one code, the others refused, one grant answered", async () => {
    const b = new Browser(t);
    const start = await b.authorize({ ...base(), client_id: publicClientId, code_challenge: challenge, code_challenge_method: "S256" });
    const id = authRequestOf(start);
    await b.post("loginname", id, { loginName: "alice" });
    const loc = (await b.post("password", id, { password: "correct horse battery" })).headers.get("location")!;
    expect(loc).toMatch(/^\/oauth\/v2\/authorize\/callback/);
    const answers = await Promise.all(Array.from({ length: 6 }, () => b.callback(loc)));
    const codes = answers.filter((r) => r.status === 302 && redirectParams(r).get("code")).map((r) => redirectParams(r).get("code")!);
    expect(codes).toHaveLength(1);
    // A loser that found the request still pending answers the client with an error; one that
    // came after the winner finds none (400).
    const losers = answers.filter((r) => !(r.status === 302 && redirectParams(r).get("code")));
    for (const r of losers) expect(r.status === 400 || redirectParams(r).get("error") === "invalid_request").toBe(true);
    const [row] = await t.inst.db.select().from(authorizationCodes).where(eq(authorizationCodes.codeHash, sha256(codes[0]!)));
    const authorized = await t.inst.db.select().from(auditEvents).where(and(eq(auditEvents.action, "oauth.authorized"), eq(auditEvents.targetId, row!.grantId)));
    expect(authorized).toHaveLength(1);
    expect(await t.inst.db.select().from(authorizationCodes).where(eq(authorizationCodes.grantId, row!.grantId))).toHaveLength(1);
  });

  it("answering from a live session keeps it alive: its last activity and idle expiry move forward, never past its absolute end", async () => {
    const b = new Browser(t);
    const start = await b.authorize(base());
    const done = await b.signIn(start, "alice", "correct horse battery");
    expect(redirectParams(done).get("code")).toBeTruthy();
    const ua = await findUserAgent(t.inst.db, b.cookies.get("torii_ua")!);
    const [before] = await t.inst.db.select().from(sessions).where(eq(sessions.userAgentId, ua!.id));
    const earlier = new Date(Date.now() - 60_000);
    await t.inst.db.update(sessions).set({ lastActiveAt: earlier, idleExpiresAt: new Date(Date.now() + 60_000) }).where(eq(sessions.id, before!.id));

    expect(redirectParams(await b.authorize({ ...base(), prompt: "none" })).get("code")).toBeTruthy();
    const [after] = await t.inst.db.select().from(sessions).where(eq(sessions.id, before!.id));
    expect(after!.lastActiveAt.getTime()).toBeGreaterThan(earlier.getTime());
    const { lifetimes } = await getSettings(t.inst);
    const expected = Math.min(after!.absoluteExpiresAt.getTime(), after!.lastActiveAt.getTime() + lifetimes.sessionIdle * 1000);
    expect(Math.abs(after!.idleExpiresAt.getTime() - expected)).toBeLessThan(1000);
  });

  // Recording activity is a write to the session's row, which every authorization of the browser
  // shares; within a minute of the last recording an authorization leaves the row alone.
  it("an authorization within a minute of the session's recorded activity answers without writing the session again", async () => {
    const b = new Browser(t);
    await b.signIn(await b.authorize(base()), "alice", "correct horse battery");
    const ua = await findUserAgent(t.inst.db, b.cookies.get("torii_ua")!);
    const [before] = await t.inst.db.select().from(sessions).where(eq(sessions.userAgentId, ua!.id));
    const recent = new Date(Date.now() - 50_000);
    await t.inst.db.update(sessions).set({ lastActiveAt: recent }).where(eq(sessions.id, before!.id));
    for (const prompt of [undefined, "none"]) {
      expect(redirectParams(await b.authorize({ ...base(), ...(prompt ? { prompt } : {}) })).get("code")).toBeTruthy();
    }
    const [after] = await t.inst.db.select().from(sessions).where(eq(sessions.id, before!.id));
    expect(after!.lastActiveAt).toEqual(recent);
    expect(after!.idleExpiresAt).toEqual(before!.idleExpiresAt);
  });

  it("the session is then used silently, also with prompt=none; prompt=login asks again", async () => {
    const b = new Browser(t);
    await b.signIn(await b.authorize(base()), "alice", "correct horse battery");
    expect(redirectParams(await b.authorize(base())).get("code")).toBeTruthy();
    expect(redirectParams(await b.authorize({ ...base(), prompt: "none" })).get("code")).toBeTruthy();
    const login = await b.authorize({ ...base(), prompt: "login" });
    expect(login.headers.get("location")).toMatch(/^\/ui\/login\?/);
    const create = await b.authorize({ ...base(), prompt: "create" });
    expect(create.headers.get("location")).toMatch(/^\/ui\/login\/register\?/);
    const select = await b.authorize({ ...base(), prompt: "select_account" });
    expect(select.headers.get("location")).toMatch(/^\/ui\/login\/accounts\?/);
    // max_age: a fresh sign-in is needed once the auth time is older.
    await new Promise((r) => setTimeout(r, 1100));
    expect(redirectParams(await b.authorize({ ...base(), prompt: "none", max_age: "0" })).get("error")).toBe("login_required");
    const reauth = await b.authorize({ ...base(), max_age: "0" });
    expect(reauth.headers.get("location")).toMatch(/^\/ui\/login\/password\?/);
    expect(redirectParams(await b.authorize({ ...base(), max_age: "3600" })).get("code")).toBeTruthy();
  });

  it("scope values it does not understand are left out, not refused (OIDC Core 3.1.2.1)", async () => {
    const b = new Browser(t);
    await b.signIn(await b.authorize(base()), "alice", "correct horse battery");
    const code = redirectParams(await b.authorize({ ...base(), scope: "openid groups profile urn:other:scope" })).get("code")!;
    expect(code).toBeTruthy();
    const [row] = await t.inst.db.select().from(authorizationCodes).where(eq(authorizationCodes.codeHash, sha256(code)));
    expect(row!.scopes).toEqual(["openid", "profile"]);
  });

  it("two sessions: the chooser, account_selection_required with prompt=none (OIDC Core 3.1.2.6), login_hint preselects", async () => {
    const b = new Browser(t);
    await b.signIn(await b.authorize(base()), "alice", "correct horse battery");
    await b.signIn(await b.authorize({ ...base(), prompt: "login" }), "bob+test", "correct horse battery");
    expect((await b.authorize(base())).headers.get("location")).toMatch(/^\/ui\/login\/accounts\?/);
    expect(redirectParams(await b.authorize({ ...base(), prompt: "none" })).get("error")).toBe("account_selection_required");
    const hinted = await b.authorize({ ...base(), prompt: "none", login_hint: "bob+test" });
    expect(redirectParams(hinted).get("code")).toBeTruthy();
  });

  it("id_token_hint selects its subject; with prompt=none it needs a live session", async () => {
    const b = new Browser(t);
    const first = await b.signIn(await b.authorize({ ...base(), response_type: "id_token", nonce: "n" }), "alice", "correct horse battery");
    const idToken = redirectParams(first).get("id_token")!;
    await b.signIn(await b.authorize({ ...base(), prompt: "login" }), "bob+test", "correct horse battery");
    const res = await b.authorize({ ...base(), response_type: "id_token", nonce: "n2", prompt: "none", id_token_hint: idToken });
    const { payload } = await jwtVerify(redirectParams(res).get("id_token")!, await jwks(), { issuer: t.issuer, audience: clientId });
    expect(payload.sub).toBe((await jwtVerify(idToken, await jwks())).payload.sub);
    const other = new Browser(t);
    expect(redirectParams(await other.authorize({ ...base(), prompt: "none", id_token_hint: idToken })).get("error")).toBe("login_required");
  });

  it("id_token_hint must be an ID token issued to this client: an access token or another client's ID token is invalid_request", async () => {
    const b = new Browser(t);
    const first = await b.signIn(await b.authorize({ ...base(), response_type: "id_token token", nonce: "n" }), "alice", "correct horse battery");
    const p = redirectParams(first);
    const accessToken = p.get("access_token")!;
    const otherClient = await makeClient(t);
    const foreign = redirectParams(
      await b.authorize({ client_id: otherClient.id, redirect_uri: REDIRECT, response_type: "id_token", scope: "openid", nonce: "n", prompt: "none" }),
    ).get("id_token")!;
    expect(foreign).toBeTruthy();
    for (const hint of [accessToken, foreign]) {
      const res = await b.authorize({ ...base(), prompt: "none", id_token_hint: hint });
      expect(redirectParams(res).get("error")).toBe("invalid_request");
    }
    // This client's own ID token is still a good hint.
    const own = await b.authorize({ ...base(), prompt: "none", id_token_hint: p.get("id_token")! });
    expect(redirectParams(own).get("code")).toBeTruthy();
  });
});

describe("implicit flow", () => {
  it("id_token token: access token, at_hash, azp, nonce, and no profile claims in the ID token", async () => {
    const b = new Browser(t);
    const done = await b.signIn(await b.authorize({ ...base(), response_type: "id_token token", nonce: "abc", scope: "openid email profile" }), "alice", "correct horse battery");
    const p = redirectParams(done);
    expect(new URL(done.headers.get("location")!).search).toBe("");
    expect(p.get("token_type")).toBe("Bearer");
    expect(Number(p.get("expires_in"))).toBeGreaterThan(0);
    expect(p.get("scope")).toBe("openid email profile");
    expect(p.get("state")).toBe("s-1");
    const { payload } = await jwtVerify(p.get("id_token")!, await jwks(), { issuer: t.issuer, audience: clientId });
    expect(payload.nonce).toBe("abc");
    expect(payload.azp).toBe(clientId);
    const digest = createHash("sha256").update(p.get("access_token")!).digest();
    expect(payload.at_hash).toBe(digest.subarray(0, 16).toString("base64url"));
    expect(payload.email).toBeUndefined();
    expect(payload.given_name).toBeUndefined();
  });

  it("id_token alone carries the scope claims", async () => {
    const b = new Browser(t);
    const done = await b.signIn(await b.authorize({ ...base(), response_type: "id_token", nonce: "abc", scope: "openid email" }), "alice", "correct horse battery");
    const p = redirectParams(done);
    expect(p.get("access_token")).toBeNull();
    const { payload } = await jwtVerify(p.get("id_token")!, await jwks(), { issuer: t.issuer, audience: clientId });
    expect(payload.email).toBe("alice@mail.example");
    expect(payload.at_hash).toBeUndefined();
  });
});

describe("discovery", () => {
  it("advertises what the authorization endpoint supports", async () => {
    const doc = (await (await t.api("/.well-known/openid-configuration", { auth: false })).json()) as Record<string, unknown>;
    expect(doc.authorization_endpoint).toBe(`${t.issuer}/oauth/v2/authorize`);
    expect(doc.response_types_supported).toEqual(["code", "id_token", "id_token token"]);
    expect(doc.response_modes_supported).toEqual(["query", "fragment", "form_post"]);
    expect(doc.prompt_values_supported).toEqual(["none", "login", "consent", "select_account", "create"]);
    expect(doc.ui_locales_supported).toEqual(["en", "de", "fr", "it"]);
    expect(doc.code_challenge_methods_supported).toEqual(["S256"]);
  });
});
