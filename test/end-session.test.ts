import { and, eq, isNull } from "drizzle-orm";
import { generateKeyPair, SignJWT, decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditEvents, sessions } from "@/db/schema";
import { handleLogoutConfirm } from "@/lib/oauth/end-session-confirm";
import { handleEndSession } from "@/lib/oauth/end-session";
import { logoutCsrf } from "@/lib/oauth/end-session-request";
import { findUserAgent, liveSessions } from "@/lib/store/sessions";
import type { Client } from "@/lib/store/clients";
import type { User } from "@/lib/store/users";
import { Browser, makeUser, redirectParams } from "./authorize-support";
import { startTestInstance, type TestInstance } from "./harness";
import { introspect, refresh } from "./introspect-support";
import { basic, makeClient, token } from "./token-support";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const PASSWORD = "correct horse battery";
const REDIRECT = "https://rp.example/cb";
const BYE = "https://rp.example/bye";
let n = 0;
const uniq = (p: string) => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

type Rp = { client: Client; secret: string; auth: string };

async function rp(patch: Parameters<typeof makeClient>[1] = {}): Promise<Rp> {
  const { client, secret } = await makeClient(t, {
    responseTypes: ["code"],
    grantTypes: ["authorization_code", "refresh_token"],
    postLogoutRedirectUris: [BYE],
    ...patch,
  });
  return { client, secret: secret!, auth: basic(client.id, secret!) };
}

const authParams = (c: Client, extra: Record<string, string> = {}) => ({
  client_id: c.id,
  redirect_uri: REDIRECT,
  response_type: "code",
  scope: "openid profile offline_access",
  state: "s",
  nonce: "n",
  ...extra,
});

type Signed = { user: User; access: string; refresh: string; idToken: string; sid: string };

/** Signs `user` in through the hosted login (or silently, with an existing session) and redeems the code. */
async function signIn(b: Browser, r: Rp, user: User, extra: Record<string, string> = {}): Promise<Signed> {
  let res = await b.authorize(authParams(r.client, extra));
  if (!res.headers.get("location")!.startsWith(REDIRECT)) res = await b.signIn(res, user.username, PASSWORD);
  const code = redirectParams(res).get("code");
  if (!code) throw new Error(`no code: ${res.headers.get("location")}`);
  const tr = await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT }, { auth: r.auth });
  if (tr.status !== 200) throw new Error(JSON.stringify(tr.body));
  return { user, access: tr.body.access_token, refresh: tr.body.refresh_token, idToken: tr.body.id_token, sid: decodeJwt(tr.body.id_token).sid as string };
}

async function endSession(b: Browser, params: Record<string, string>, method: "GET" | "POST" = "GET"): Promise<Response> {
  const qs = new URLSearchParams(params).toString();
  const req =
    method === "GET"
      ? b.request(`/oidc/v1/end_session?${qs}`)
      : b.request("/oidc/v1/end_session", { method: "POST", body: qs, headers: { "content-type": "application/x-www-form-urlencoded" } });
  return handleEndSession(t.inst, req);
}

async function uaId(b: Browser): Promise<string> {
  return (await findUserAgent(t.inst.db, b.cookies.get("torii_ua")!))!.id;
}

async function live(b: Browser): Promise<string[]> {
  return (await liveSessions(t.inst.db, await uaId(b), new Date())).map((s) => s.user.username).sort();
}

/** Posts the confirmation form as the confirmation page renders it. */
async function confirm(b: Browser, location: string, o: { csrf?: string | null; origin?: string; stay?: boolean } = {}): Promise<Response> {
  const sealed = new URL(location).searchParams.get("request")!;
  const csrf = o.csrf === undefined ? logoutCsrf(t.inst.masterKey, await uaId(b), sealed) : o.csrf;
  const body = new URLSearchParams({ request: sealed, ...(csrf === null ? {} : { csrf }), ...(o.stay ? { stay: "1" } : {}) });
  return handleLogoutConfirm(t.inst, 
    b.request("/ui/logout/confirm", { method: "POST", body: body.toString(), headers: { "content-type": "application/x-www-form-urlencoded", origin: o.origin ?? t.baseUrl } }),
  );
}

const loc = (res: Response) => res.headers.get("location") ?? "";
const signedOutUrl = () => `${t.issuer}/ui/login/signedout`;
const errorUrl = (reason: string) => `${t.issuer}/ui/logout/error?reason=${reason}`;

async function expectLoggedOut(b: Browser, r: Rp, s: Signed) {
  expect(redirectParams(await b.authorize(authParams(r.client, { prompt: "none" }))).get("error")).toBe("login_required");
  expect((await introspect(t, s.access, r.auth)).body).toEqual({ active: false });
  const rr = await refresh(t, s.refresh, r.auth);
  expect(rr.status).toBe(400);
  expect(rr.body.error).toBe("invalid_grant");
}

async function expectStillSignedIn(b: Browser, r: Rp, s: Signed) {
  expect(redirectParams(await b.authorize(authParams(r.client, { prompt: "none", login_hint: s.user.username }))).get("code")).toBeTruthy();
  expect((await introspect(t, s.access, r.auth)).body.active).toBe(true);
}

describe("end_session with id_token_hint (tied to its client): logout at once", () => {
  it("redirects to a registered post_logout_redirect_uri with state unmodified, and revokes what the session issued", async () => {
    const r = await rp();
    const user = await makeUser(t, uniq("ann"), PASSWORD);
    const b = new Browser(t);
    const s = await signIn(b, r, user);
    const state = "a b&c=d/é?";
    const res = await endSession(b, { id_token_hint: s.idToken, post_logout_redirect_uri: BYE, state });
    expect(res.status).toBe(302);
    const to = new URL(loc(res));
    expect(to.origin + to.pathname).toBe(BYE);
    expect(to.searchParams.get("state")).toBe(state);
    expect(res.headers.get("cache-control")).toBe("no-store");
    await expectLoggedOut(b, r, s);
    const events = await t.inst.db.select().from(auditEvents).where(and(eq(auditEvents.action, "session.ended"), eq(auditEvents.targetId, s.sid)));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actorType: "user", actorId: user.id, clientId: r.client.id });
  });

  it("works with POST too, and with opaque access tokens", async () => {
    const r = await rp({ accessTokenType: "opaque" });
    const user = await makeUser(t, uniq("bea"), PASSWORD);
    const b = new Browser(t);
    const s = await signIn(b, r, user);
    const res = await endSession(b, { id_token_hint: s.idToken, post_logout_redirect_uri: BYE }, "POST");
    expect(res.status).toBe(303);
    expect(loc(res)).toBe(BYE);
    await expectLoggedOut(b, r, s);
  });

  it("an unregistered post_logout_redirect_uri is never followed: signed-out page (the logout still happens)", async () => {
    const r = await rp();
    const user = await makeUser(t, uniq("cat"), PASSWORD);
    const b = new Browser(t);
    const s = await signIn(b, r, user);
    for (const uri of ["https://evil.example/bye", BYE + "/", BYE.toUpperCase()]) {
      const res = await endSession(b, { id_token_hint: s.idToken, post_logout_redirect_uri: uri, state: "x" });
      expect(loc(res)).toBe(signedOutUrl());
    }
    await expectLoggedOut(b, r, s);
  });

  it("the URI is checked against the hint's client (azp), not any client that registered it", async () => {
    const r = await rp();
    const other = await rp({ postLogoutRedirectUris: ["https://other.example/bye"] });
    const user = await makeUser(t, uniq("dan"), PASSWORD);
    const b = new Browser(t);
    const s = await signIn(b, r, user);
    const res = await endSession(b, { id_token_hint: s.idToken, post_logout_redirect_uri: "https://other.example/bye" });
    expect(loc(res)).toBe(signedOutUrl());
    // The URI is registered, but for the other client: still not followed.
    expect(other.client.postLogoutRedirectUris).toContain("https://other.example/bye");
  });

  it("accepts a matching client_id next to the hint, and an expired hint that carries our signature", async () => {
    const r = await rp({ idTokenLifetime: 1 });
    const user = await makeUser(t, uniq("eve"), PASSWORD);
    const b = new Browser(t);
    const s = await signIn(b, r, user);
    await new Promise((res) => setTimeout(res, 2100));
    expect(decodeJwt(s.idToken).exp! * 1000).toBeLessThan(Date.now());
    const res = await endSession(b, { id_token_hint: s.idToken, client_id: r.client.id, post_logout_redirect_uri: BYE });
    expect(loc(res)).toBe(BYE);
    await expectLoggedOut(b, r, s);
  });

  it("without logout_hint every session of the user agent ends; other browsers keep theirs", async () => {
    const r = await rp();
    const a = await makeUser(t, uniq("fay"), PASSWORD);
    const c = await makeUser(t, uniq("gus"), PASSWORD);
    const b = new Browser(t);
    const sa = await signIn(b, r, a);
    const sc = await signIn(b, r, c, { prompt: "login" });
    const elsewhere = new Browser(t);
    const se = await signIn(elsewhere, r, a);
    expect(await live(b)).toEqual([a.username, c.username].sort());
    await endSession(b, { id_token_hint: sa.idToken });
    expect(await live(b)).toEqual([]);
    expect((await introspect(t, sc.access, r.auth)).body.active).toBe(false);
    await expectStillSignedIn(elsewhere, r, se);
  });

  it("logout_hint selects the user whose sessions end", async () => {
    const r = await rp();
    const a = await makeUser(t, uniq("hal"), PASSWORD);
    const c = await makeUser(t, uniq("ivy"), PASSWORD);
    const b = new Browser(t);
    const sa = await signIn(b, r, a);
    const sc = await signIn(b, r, c, { prompt: "login" });
    const res = await endSession(b, { id_token_hint: sa.idToken, logout_hint: a.username, post_logout_redirect_uri: BYE });
    expect(loc(res)).toBe(BYE);
    expect(await live(b)).toEqual([c.username]);
    expect((await introspect(t, sa.access, r.auth)).body.active).toBe(false);
    await expectStillSignedIn(b, r, sc);
  });
});

describe("end_session errors: an error page, nothing ends, no redirect", () => {
  async function setup() {
    const r = await rp();
    const user = await makeUser(t, uniq("joe"), PASSWORD);
    const b = new Browser(t);
    return { r, b, s: await signIn(b, r, user) };
  }

  it("id_token_hint and client_id naming different clients", async () => {
    const { r, b, s } = await setup();
    const other = await rp();
    const res = await endSession(b, { id_token_hint: s.idToken, client_id: other.client.id, post_logout_redirect_uri: BYE });
    expect(loc(res)).toBe(errorUrl("clientMismatch"));
    await expectStillSignedIn(b, r, s);
  });

  it("a hint with alg none, signed by a foreign key, an access token or garbage", async () => {
    const { r, b, s } = await setup();
    const claims = decodeJwt(s.idToken);
    const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const foreign = await generateKeyPair("RS256");
    const hints = [
      `${enc({ alg: "none", typ: "JWT" })}.${enc(claims)}.`,
      await new SignJWT(claims).setProtectedHeader({ alg: "RS256", typ: "JWT", kid: decodeProtectedHeader(s.idToken).kid }).sign(foreign.privateKey),
      s.access,
      "not-a-jwt",
    ];
    for (const id_token_hint of hints) {
      const res = await endSession(b, { id_token_hint, post_logout_redirect_uri: BYE, state: "x" });
      expect(loc(res), id_token_hint.slice(0, 20)).toBe(errorUrl("invalidHint"));
    }
    await expectStillSignedIn(b, r, s);
  });

  it("an unknown client_id", async () => {
    const { r, b, s } = await setup();
    expect(loc(await endSession(b, { client_id: "nobody", post_logout_redirect_uri: BYE }))).toBe(errorUrl("unknownClient"));
    await expectStillSignedIn(b, r, s);
  });

  it("a logout_hint naming someone else than the hint's subject", async () => {
    const { r, b, s } = await setup();
    const other = await makeUser(t, uniq("kim"), PASSWORD);
    expect(loc(await endSession(b, { id_token_hint: s.idToken, logout_hint: other.username }))).toBe(errorUrl("userMismatch"));
    await expectStillSignedIn(b, r, s);
  });

  it("a logout_hint naming nobody gets the same answer as one naming someone else (no user enumeration)", async () => {
    const { r, b, s } = await setup();
    const other = await makeUser(t, uniq("lea"), PASSWORD);
    const existing = await endSession(b, { id_token_hint: s.idToken, logout_hint: other.username });
    const unknown = await endSession(b, { id_token_hint: s.idToken, logout_hint: uniq("nobody") });
    expect(loc(unknown)).toBe(loc(existing));
    expect(unknown.status).toBe(existing.status);
    expect(loc(unknown)).toBe(errorUrl("userMismatch"));
    // Without a hint: a name of someone not signed in here and a name of nobody both end nothing
    // and both land on the signed-out page.
    const noHintExisting = await endSession(b, { logout_hint: other.username });
    const noHintUnknown = await endSession(b, { logout_hint: uniq("nobody") });
    expect(loc(noHintExisting)).toBe(signedOutUrl());
    expect(loc(noHintUnknown)).toBe(signedOutUrl());
    await expectStillSignedIn(b, r, s);
  });

  it("a repeated parameter", async () => {
    const { r, b, s } = await setup();
    const res = await handleEndSession(t.inst, b.request(`/oidc/v1/end_session?state=a&state=b&id_token_hint=${s.idToken}`));
    expect(loc(res)).toBe(errorUrl("badRequest"));
    await expectStillSignedIn(b, r, s);
  });
});

describe("requests not tied to a client ask the user first", () => {
  it("client_id only: confirmation page, then the logout and the redirect with state", async () => {
    const r = await rp();
    const user = await makeUser(t, uniq("lea"), PASSWORD);
    const b = new Browser(t);
    const s = await signIn(b, r, user);
    const res = await endSession(b, { client_id: r.client.id, post_logout_redirect_uri: BYE, state: "st" });
    expect(loc(res)).toMatch(new RegExp(`^${t.issuer}/ui/logout\\?request=`));
    await expectStillSignedIn(b, r, s);
    const done = await confirm(b, loc(res));
    expect(done.status).toBe(303);
    expect(loc(done)).toBe(`${BYE}?state=st`);
    await expectLoggedOut(b, r, s);
    const events = await t.inst.db.select().from(auditEvents).where(and(eq(auditEvents.action, "session.ended"), eq(auditEvents.targetId, s.sid)));
    expect(events[0]?.details).toMatchObject({ via: "end_session_confirmation" });
  });

  it("neither hint nor client_id: the post_logout_redirect_uri is ignored", async () => {
    const r = await rp();
    const user = await makeUser(t, uniq("max"), PASSWORD);
    const b = new Browser(t);
    const s = await signIn(b, r, user);
    const res = await endSession(b, { post_logout_redirect_uri: BYE, state: "st" });
    expect(loc(res)).toMatch(/\/ui\/logout\?request=/);
    expect(loc(await confirm(b, loc(res)))).toBe(signedOutUrl());
    await expectLoggedOut(b, r, s);
  });

  it("a valid hint for a user not signed in in this browser is not enough (no forced logout by link)", async () => {
    const r = await rp();
    const victim = await makeUser(t, uniq("ned"), PASSWORD);
    const attacker = await makeUser(t, uniq("oz"), PASSWORD);
    const vb = new Browser(t);
    const sv = await signIn(vb, r, victim);
    const sa = await signIn(new Browser(t), r, attacker);
    const res = await endSession(vb, { id_token_hint: sa.idToken, post_logout_redirect_uri: BYE });
    expect(loc(res)).toMatch(/\/ui\/logout\?request=/);
    await expectStillSignedIn(vb, r, sv);
  });

  it("nor is a hint from another session of the same user (another browser's ID token): the user is asked (RP-Initiated Logout 1.0 §2)", async () => {
    const r = await rp();
    const user = await makeUser(t, uniq("pia"), PASSWORD);
    const here = new Browser(t);
    const sHere = await signIn(here, r, user);
    const sThere = await signIn(new Browser(t), r, user);
    expect(sThere.sid).not.toBe(sHere.sid);
    const res = await endSession(here, { id_token_hint: sThere.idToken, post_logout_redirect_uri: BYE });
    expect(loc(res)).toMatch(/\/ui\/logout\?request=/);
    await expectStillSignedIn(here, r, sHere);
    // The user agrees: this browser's sessions end.
    expect(loc(await confirm(here, loc(res)))).toBe(BYE);
    await expectLoggedOut(here, r, sHere);
  });

  it("the user may decline: nothing ends, back to the relying party's redirect with state, or to the account page", async () => {
    const r = await rp();
    const user = await makeUser(t, uniq("rae"), PASSWORD);
    const b = new Browser(t);
    const s = await signIn(b, r, user);
    const res = await endSession(b, { client_id: r.client.id, post_logout_redirect_uri: BYE, state: "st" });
    const stayed = await confirm(b, loc(res), { stay: true });
    expect(stayed.status).toBe(303);
    expect(loc(stayed)).toBe(`${BYE}?state=st`);
    await expectStillSignedIn(b, r, s);
    const rotated = await refresh(t, s.refresh, r.auth);
    expect(rotated.status).toBe(200);
    const ended = await t.inst.db.select().from(auditEvents).where(and(eq(auditEvents.action, "session.ended"), eq(auditEvents.targetId, s.sid)));
    expect(ended).toHaveLength(0);
    // Neither hint nor client: no redirect to return to, so the account page.
    const bare = await endSession(b, {});
    expect(loc(await confirm(b, loc(bare), { stay: true }))).toBe(`${t.issuer}/ui/account`);
    await expectStillSignedIn(b, r, s);
    // Declining takes the same checks as agreeing: a forged answer goes nowhere.
    expect(loc(await confirm(b, loc(res), { stay: true, csrf: "forged" }))).toBe(errorUrl("expired"));
    // And the same pending request can still be agreed to.
    expect(loc(await confirm(b, loc(res)))).toBe(`${BYE}?state=st`);
    await expectLoggedOut(b, r, { ...s, refresh: rotated.body.refresh_token });
  });

  it("the confirmation needs the CSRF token, our origin and the same browser; a tampered request is refused", async () => {
    const r = await rp();
    const user = await makeUser(t, uniq("pia"), PASSWORD);
    const b = new Browser(t);
    const s = await signIn(b, r, user);
    const res = await endSession(b, { client_id: r.client.id, post_logout_redirect_uri: BYE });
    const expired = errorUrl("expired");
    expect(loc(await confirm(b, loc(res), { csrf: null }))).toBe(expired);
    expect(loc(await confirm(b, loc(res), { csrf: "forged" }))).toBe(expired);
    expect(loc(await confirm(b, loc(res), { origin: "https://evil.example" }))).toBe(expired);
    const sealed = new URL(loc(res)).searchParams.get("request")!;
    const [body, tag] = sealed.split(".");
    const payload = JSON.parse(Buffer.from(body!, "base64url").toString());
    const altered = `${Buffer.from(JSON.stringify({ ...payload, redirect: "https://evil.example/" })).toString("base64url")}.${tag ?? ""}`;
    expect(loc(await confirm(b, `${t.issuer}/ui/logout?request=${encodeURIComponent(altered)}`))).toBe(expired);
    // Another browser cannot use this browser's pending logout.
    const other = new Browser(t);
    await signIn(other, r, await makeUser(t, uniq("quin"), PASSWORD));
    const stolen = await handleLogoutConfirm(t.inst, 
      other.request("/ui/logout/confirm", {
        method: "POST",
        body: new URLSearchParams({ request: sealed, csrf: logoutCsrf(t.inst.masterKey, await uaId(b), sealed) }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded", origin: t.baseUrl },
      }),
    );
    expect(loc(stolen)).toBe(expired);
    await expectStillSignedIn(b, r, s);
  });
});

describe("other end_session behaviour", () => {
  it("a browser without sessions goes straight on (nothing to confirm)", async () => {
    const r = await rp();
    const user = await makeUser(t, uniq("rex"), PASSWORD);
    const s = await signIn(new Browser(t), r, user);
    const stranger = new Browser(t);
    expect(loc(await endSession(stranger, { id_token_hint: s.idToken, post_logout_redirect_uri: BYE }))).toBe(BYE);
    expect(loc(await endSession(stranger, {}))).toBe(signedOutUrl());
    expect((await introspect(t, s.access, r.auth)).body.active).toBe(true);
  });

  it("ui_locales pins the locale of the pages that follow", async () => {
    const r = await rp();
    const user = await makeUser(t, uniq("sam"), PASSWORD);
    const b = new Browser(t);
    const s = await signIn(b, r, user);
    const res = await endSession(b, { id_token_hint: s.idToken, ui_locales: "xx de-CH" });
    expect(res.headers.getSetCookie().some((c) => c.startsWith("torii_locale=de;"))).toBe(true);
  });

  it("ends the user's expired-but-open sessions of this browser too", async () => {
    const r = await rp();
    const user = await makeUser(t, uniq("tom"), PASSWORD);
    const b = new Browser(t);
    const s = await signIn(b, r, user);
    await t.inst.db.update(sessions).set({ idleExpiresAt: new Date(Date.now() - 1000) }).where(eq(sessions.id, s.sid));
    await endSession(b, { id_token_hint: s.idToken, logout_hint: user.username });
    const open = await t.inst.db.select().from(sessions).where(and(eq(sessions.id, s.sid), isNull(sessions.endedAt)));
    expect(open).toHaveLength(0);
    expect((await refresh(t, s.refresh, r.auth)).body.error).toBe("invalid_grant");
  });

  it("other methods: 405", async () => {
    expect((await handleEndSession(t.inst, new Request(t.baseUrl + "/oidc/v1/end_session", { method: "PUT" }))).status).toBe(405);
  });
});

describe("discovery", () => {
  it("advertises introspection, revocation, userinfo and end_session with their authentication methods", async () => {
    const doc = await (await fetch(t.baseUrl + "/.well-known/openid-configuration")).json();
    expect(doc).toMatchObject({
      introspection_endpoint: `${t.issuer}/oauth/v2/introspect`,
      introspection_endpoint_auth_methods_supported: ["client_secret_basic", "private_key_jwt"],
      revocation_endpoint: `${t.issuer}/oauth/v2/revoke`,
      revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none", "private_key_jwt"],
      userinfo_endpoint: `${t.issuer}/oidc/v1/userinfo`,
      end_session_endpoint: `${t.issuer}/oidc/v1/end_session`,
    });
    expect(doc.introspection_endpoint_auth_signing_alg_values_supported).toContain("RS256");
    expect(doc.introspection_endpoint_auth_signing_alg_values_supported).not.toContain("none");
  });
});
