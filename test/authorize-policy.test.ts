import { createHash } from "node:crypto";
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findUserAgent, liveSessions } from "@/lib/store/sessions";
import { startTestInstance, type TestInstance } from "./harness";
import { authRequestOf, Browser, makeClient, makeUser, REDIRECT, redirectParams } from "./authorize-support";

/**
 * The sign-in policy end to end through the authorization endpoint, the login handlers and the
 * callback: the two defects of OIDC Core 3.1.2.1 (an id_token_hint answered for another user;
 * max_age=0 asking for a sign-in forever).
 */

let t: TestInstance;
let clientId: string;
let alice: { id: string };
let bob: { id: string };
const PASSWORD = "correct horse battery";
const verifier = "w".repeat(50);
const challenge = createHash("sha256").update(verifier).digest("base64url");

beforeAll(async () => {
  t = await startTestInstance();
  clientId = (await makeClient(t, { authMethod: "none" })).id;
  alice = await makeUser(t, "alice");
  bob = await makeUser(t, "bob");
});
afterAll(() => t.close());

const base = () => ({ client_id: clientId, redirect_uri: REDIRECT, response_type: "code", scope: "openid", state: "s", code_challenge: challenge, code_challenge_method: "S256" });

async function jwks() {
  const res = await t.api("/oauth/v2/keys", { auth: false });
  return createLocalJWKSet((await res.json()) as JSONWebKeySet);
}

/** The relying party's side: the code exchanged at the token endpoint, the ID token verified. */
async function redeem(res: Response): Promise<JWTPayload> {
  const code = redirectParams(res).get("code");
  expect(code, `expected a code, got ${res.headers.get("location")}`).toBeTruthy();
  const body = new URLSearchParams({ grant_type: "authorization_code", code: code!, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier });
  const r = await t.api("/oauth/v2/token", { auth: false, method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: body.toString() });
  const json = (await r.json()) as { id_token: string };
  expect(r.status).toBe(200);
  return (await jwtVerify(json.id_token, await jwks(), { issuer: t.issuer, audience: clientId })).payload;
}

/** An ID token for alice, as a relying party keeps it for later hints. */
async function aliceIdToken(): Promise<string> {
  const b = new Browser(t);
  const done = await b.signIn(await b.authorize({ ...base(), response_type: "id_token", nonce: "n" }), "alice", PASSWORD);
  return redirectParams(done).get("id_token")!;
}

async function sessionsOf(b: Browser) {
  const ua = await findUserAgent(t.inst.db, b.cookies.get("torii_ua") ?? "");
  return ua ? liveSessions(t.inst.db, ua.id, new Date()) : [];
}

const location = (r: Response) => r.headers.get("location") ?? "";

describe("id_token_hint names alice: never a code for anyone else", () => {
  it("no session, bob signs in: no code and no session for bob; the login page asks for alice; alice's sign-in finishes", async () => {
    const hint = await aliceIdToken();
    const b = new Browser(t);
    const start = await b.authorize({ ...base(), id_token_hint: hint });
    expect(location(start)).toMatch(/^\/ui\/login\?authRequest=/);
    const id = authRequestOf(start);

    expect(location(await b.post("loginname", id, { loginName: "bob" }))).toMatch(/^\/ui\/login\/password\?/);
    const refused = await b.post("password", id, { password: PASSWORD });
    expect(location(refused)).toBe(`/ui/login?authRequest=${encodeURIComponent(id)}`);
    expect(await sessionsOf(b)).toEqual([]);
    // Going to the callback anyway gets no code either.
    const sneaky = await b.callback(`/oauth/v2/authorize/callback?id=${encodeURIComponent(id)}`);
    expect(location(sneaky)).toMatch(/^\/ui\/login\?/);

    // The same request, now as alice.
    const done = await b.signIn(refused, "alice", PASSWORD);
    expect((await redeem(done)).sub).toBe(alice.id);
  });

  it("only bob's session in the browser: the login asks for alice instead of finishing for bob; prompt=none is login_required", async () => {
    const hint = await aliceIdToken();
    const b = new Browser(t);
    await b.signIn(await b.authorize(base()), "bob", PASSWORD);
    expect(redirectParams(await b.authorize({ ...base(), prompt: "none", id_token_hint: hint })).get("error")).toBe("login_required");
    const start = await b.authorize({ ...base(), id_token_hint: hint });
    expect(location(start)).toMatch(/^\/ui\/login\?authRequest=/);
    // bob's existing session, picked on the chooser, is refused too.
    const [bobSession] = (await sessionsOf(b)).filter((s) => s.userId === bob.id);
    const picked = await b.post("account", authRequestOf(start), { sessionId: bobSession!.id });
    expect(location(picked)).toMatch(/^\/ui\/login\?authRequest=/);
    const done = await b.signIn(start, "alice", PASSWORD);
    expect((await redeem(done)).sub).toBe(alice.id);
  });

  it("the registration is not offered: a new account is never alice", async () => {
    const hint = await aliceIdToken();
    const b = new Browser(t);
    const start = await b.authorize({ ...base(), prompt: "create", id_token_hint: hint });
    expect(location(start)).toMatch(/^\/ui\/login\?authRequest=/);
    const fields = { username: "mallory", email: "m@mail.example", givenName: "M", familyName: "M", password: "Another-Secret-42", passwordConfirmation: "Another-Secret-42" };
    expect(location(await b.post("register", authRequestOf(start), fields))).toMatch(/^\/ui\/login\?authRequest=/);
    expect(await sessionsOf(b)).toEqual([]);
  });
});

describe("max_age: a sign-in made during the request satisfies it", () => {
  it("max_age=0 without a session: one sign-in, then the code; the ID token's auth_time is that sign-in", async () => {
    const b = new Browser(t);
    const before = Math.floor(Date.now() / 1000);
    const start = await b.authorize({ ...base(), max_age: "0" });
    expect(location(start)).toMatch(/^\/ui\/login\?/);
    const done = await b.signIn(start, "alice", PASSWORD);
    const claims = await redeem(done);
    expect(claims.sub).toBe(alice.id);
    expect(claims.auth_time).toBeGreaterThanOrEqual(before);
    expect(claims.auth_time).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it("max_age=0 with an older session: its password once, then the code, even when the callback comes seconds later", async () => {
    const b = new Browser(t);
    await b.signIn(await b.authorize(base()), "alice", PASSWORD);
    await new Promise((r) => setTimeout(r, 1100));
    const start = await b.authorize({ ...base(), max_age: "0" });
    expect(location(start)).toMatch(/^\/ui\/login\/password\?/);
    const signedIn = await b.post("password", authRequestOf(start), { password: PASSWORD });
    expect(location(signedIn)).toMatch(/^\/oauth\/v2\/authorize\/callback\?/);
    await new Promise((r) => setTimeout(r, 1100));
    const claims = await redeem(await b.callback(location(signedIn)));
    expect(Math.floor(Date.now() / 1000) - (claims.auth_time as number)).toBeLessThanOrEqual(3);
    // The fresh sign-in also satisfies the next request's max_age=5, silently.
    expect(redirectParams(await b.authorize({ ...base(), max_age: "5", prompt: "none" })).get("code")).toBeTruthy();
  });
});
