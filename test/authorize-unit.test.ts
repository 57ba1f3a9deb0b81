import { createHash } from "node:crypto";
import { jwtVerify } from "jose";
import { beforeEach, describe, expect, it } from "vitest";
import type { Engine } from "@/lib/engine";
import { handleAuthorize, handleAuthorizeCallback } from "@/lib/oauth/authorize";
import type { Client } from "@/lib/store/clients";
import type { User } from "@/lib/store/users";
import { ISSUER, makeClient, publishedKeys, REDIRECT, refused, runGrant, unitWorld } from "./fakes/factories";
import type { MemoryStore } from "./fakes/memory-store";

/**
 * The authorization endpoint (spec 4.2) against the in-memory store: which errors stay on our own
 * page and which go to the redirect URI, prompt=none, and a finished request whose code the code
 * grant redeems.
 */

const UA_COOKIE = "__Host-torii_ua";
let m: MemoryStore;
let engine: Engine;
let rp: Client;
let user: User;

beforeEach(async () => {
  ({ m, engine, rp, user } = await unitWorld());
});

const BASE = { client_id: "rp", redirect_uri: REDIRECT, response_type: "code", scope: "openid email", state: "st-1", nonce: "nonce-1" };

function authorize(params: Record<string, string | undefined>, cookie?: string): Promise<Response> {
  const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
  return handleAuthorize(engine, new Request(`${ISSUER}/oauth/v2/authorize?${q}`, { headers: cookie ? { cookie: `${UA_COOKIE}=${cookie}` } : {} }));
}

/** The redirect to the client: its parameters (in the query, or in the fragment), checked to go to the registered URI. */
function atClient(res: Response, mode: "query" | "fragment" = "query"): URLSearchParams {
  expect(res.status).toBe(302);
  const loc = new URL(res.headers.get("location")!);
  expect(`${loc.origin}${loc.pathname}`).toBe(REDIRECT);
  if (mode === "query") {
    expect(loc.hash).toBe("");
    return loc.searchParams;
  }
  expect(loc.search).toBe("");
  return new URLSearchParams(loc.hash.slice(1));
}

async function expectOwnPage(res: Response) {
  expect(res.status).toBe(400);
  expect(res.headers.get("location")).toBeNull();
  expect(res.headers.get("content-type")).toContain("text/html");
  expect(await res.text()).toContain('id="error-message"');
}

const nothingStored = () => {
  expect(m.state.authRequests.size).toBe(0);
  expect(m.state.userAgents.size).toBe(0);
};

describe("errors before the redirect URI is trusted: our own page, never a redirect", () => {
  it("an unknown client", async () => {
    await expectOwnPage(await authorize({ ...BASE, client_id: "nobody" }));
    nothingStored();
  });

  it("a redirect URI that is not registered (even one that only adds a path)", async () => {
    await expectOwnPage(await authorize({ ...BASE, redirect_uri: "https://evil.example/cb" }));
    await expectOwnPage(await authorize({ ...BASE, redirect_uri: `${REDIRECT}/more` }));
    nothingStored();
  });

  it("a loopback IP redirect URI with another port than registered is the registered one (RFC 8252 §7.3); its code is bound to that port", async () => {
    const native = makeClient({ id: "native", redirectUris: ["http://127.0.0.1/callback"], authMethod: "none" });
    m.clients.set(native.id, native);
    const { cookie } = m.signIn(user.id);
    const verifier = "n".repeat(50);
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const request = { ...BASE, client_id: "native", redirect_uri: "http://127.0.0.1:53682/callback", prompt: "none", code_challenge: challenge, code_challenge_method: "S256" };
    const res = await authorize(request, cookie);
    expect(res.status).toBe(302);
    const at = new URL(res.headers.get("location")!);
    expect(`${at.origin}${at.pathname}`).toBe("http://127.0.0.1:53682/callback");
    const code = at.searchParams.get("code")!;
    // The token request names the redirect URI of the authorization request, port and all.
    expect(await refused(runGrant(m, "authorization_code", { code, redirect_uri: "http://127.0.0.1/callback", code_verifier: verifier }, native))).toBe("invalid_grant");
    expect((await runGrant(m, "authorization_code", { code, redirect_uri: "http://127.0.0.1:53682/callback", code_verifier: verifier }, native)).access_token).toBeTruthy();
    // Only the port may differ.
    await expectOwnPage(await authorize({ ...request, redirect_uri: "http://127.0.0.1:53682/callback/x" }, cookie));
    await expectOwnPage(await authorize({ ...request, redirect_uri: "http://localhost:53682/callback" }, cookie));
  });

  it("no client_id, no redirect_uri", async () => {
    await expectOwnPage(await authorize({ ...BASE, client_id: undefined }));
    await expectOwnPage(await authorize({ ...BASE, redirect_uri: undefined }));
  });
});

describe("errors after it: to the redirect URI with the state", () => {
  const cases: [string, Record<string, string | undefined>, string, ("query" | "fragment")?][] = [
    ["an unsupported response_type", { response_type: "token" }, "unsupported_response_type"],
    // id_token answers in the fragment by default (spec 4.2, response modes), errors too.
    ["a response type the client is not registered for", { response_type: "id_token" }, "unauthorized_client", "fragment"],
    ["no response_type", { response_type: undefined }, "invalid_request"],
    ["a scope without openid", { scope: "email" }, "invalid_scope"],
    ["no scope", { scope: undefined }, "invalid_request"],
    ["code_challenge_method plain", { code_challenge: "a".repeat(43), code_challenge_method: "plain" }, "invalid_request"],
    ["code_challenge_method without code_challenge", { code_challenge_method: "S256" }, "invalid_request"],
    ["an unknown prompt value", { prompt: "sometimes" }, "invalid_request"],
  ];
  for (const [what, patch, error, mode] of cases) {
    it(`${what}: ${error}`, async () => {
      const p = atClient(await authorize({ ...BASE, ...patch }), mode);
      expect(p.get("error")).toBe(error);
      expect(p.get("state")).toBe("st-1");
      expect(p.get("code")).toBeNull();
      nothingStored();
    });
  }

  it("a public client without PKCE: invalid_request", async () => {
    m.clients.set("spa", makeClient({ id: "spa", authMethod: "none" }));
    const p = atClient(await authorize({ ...BASE, client_id: "spa" }));
    expect(p.get("error")).toBe("invalid_request");
    expect(p.get("error_description")).toMatch(/PKCE/);
  });
});

describe("prompt=none", () => {
  it("without a session: login_required at the client, and nothing stored for the browser", async () => {
    const p = atClient(await authorize({ ...BASE, prompt: "none" }));
    expect(p.get("error")).toBe("login_required");
    expect(p.get("state")).toBe("st-1");
    nothingStored();
  });

  it("with an expired session: login_required too", async () => {
    const { cookie } = m.signIn(user.id, { idleSeconds: 60 });
    m.clock.advanceSeconds(61);
    expect(atClient(await authorize({ ...BASE, prompt: "none" }, cookie)).get("error")).toBe("login_required");
  });

  it("with a live session: a code at once, which the code grant redeems once (PKCE) for tokens about that user", async () => {
    const { cookie, sessionId } = m.signIn(user.id);
    const verifier = "v".repeat(50);
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const p = atClient(await authorize({ ...BASE, prompt: "none", code_challenge: challenge, code_challenge_method: "S256" }, cookie));
    expect(p.get("error")).toBeNull();
    expect(p.get("state")).toBe("st-1");
    const code = p.get("code")!;
    expect(code).toBeTruthy();
    // Answered at once, so never stored: no callback exists that could be replayed.
    expect(m.state.authRequests.size).toBe(0);

    // Without the verifier the code is refused, and stays redeemable.
    expect(await refused(runGrant(m, "authorization_code", { code, redirect_uri: REDIRECT }, rp))).toBe("invalid_grant");
    const body = await runGrant(m, "authorization_code", { code, redirect_uri: REDIRECT, code_verifier: verifier }, rp);
    const { payload } = await jwtVerify(body.id_token!, publishedKeys(m), { issuer: ISSUER, audience: "rp", currentDate: new Date(m.clock.now()) });
    expect(payload).toMatchObject({ sub: user.id, nonce: "nonce-1", sid: sessionId });
    expect(body.scope).toBe("openid email");
    expect(await refused(runGrant(m, "authorization_code", { code, redirect_uri: REDIRECT, code_verifier: verifier }, rp))).toBe("invalid_grant");
  });
});

describe("a request that needs the login pages, then finishes at the callback", () => {
  function uaCookieOf(res: Response): string {
    const set = res.headers.getSetCookie().find((c) => c.startsWith(`${UA_COOKIE}=`));
    expect(set).toBeDefined();
    return set!.slice(UA_COOKIE.length + 1).split(";")[0]!;
  }

  function callback(id: string, cookie?: string): Promise<Response> {
    return handleAuthorizeCallback(engine, new Request(`${ISSUER}/oauth/v2/authorize/callback?id=${encodeURIComponent(id)}`, { headers: cookie ? { cookie: `${UA_COOKIE}=${cookie}` } : {} }));
  }

  it("no session: the browser gets a cookie and the login page; after sign-in the callback issues a code the code grant redeems", async () => {
    const res = await authorize(BASE);
    expect(res.status).toBe(302);
    const login = new URL(res.headers.get("location")!, ISSUER);
    expect(login.origin).toBe(ISSUER);
    expect(login.pathname).toMatch(/^\/ui\/login/);
    const id = login.searchParams.get("authRequest")!;
    const cookie = uaCookieOf(res);
    expect(m.state.authRequests.size).toBe(1);

    // Before anyone signs in, the callback sends the browser back to the login page.
    const early = await callback(id, cookie);
    expect(early.status).toBe(302);
    expect(new URL(early.headers.get("location")!, ISSUER).pathname).toMatch(/^\/ui\/login/);

    // The login handlers record the session in this browser and remember it on the request.
    const { sessionId } = m.signIn(user.id, { cookie });
    await m.store.authRequests.update(id, { sessionId });

    // Another browser cannot finish it.
    expect((await callback(id, m.signIn(user.id).cookie)).status).toBe(400);

    const p = atClient(await callback(id, cookie));
    expect(p.get("state")).toBe("st-1");
    const code = p.get("code")!;
    const body = await runGrant(m, "authorization_code", { code, redirect_uri: REDIRECT }, rp);
    const { payload } = await jwtVerify(body.access_token, publishedKeys(m), { issuer: ISSUER, currentDate: new Date(m.clock.now()) });
    expect(payload).toMatchObject({ sub: user.id, client_id: "rp", scope: "openid email" });

    // The request is answered once: a replayed callback mints no second code.
    const again = await callback(id, cookie);
    expect(again.status).toBe(400);
    expect(again.headers.get("location")).toBeNull();
    expect(m.state.codes.size).toBe(1);
  });

  it("a pending request expires with its lifetime (an hour) on the store's clock", async () => {
    const res = await authorize(BASE);
    const id = new URL(res.headers.get("location")!, ISSUER).searchParams.get("authRequest")!;
    const cookie = uaCookieOf(res);
    const { sessionId } = m.signIn(user.id, { cookie, idleSeconds: 7200 });
    await m.store.authRequests.update(id, { sessionId });
    m.clock.advanceSeconds(3601);
    const late = await callback(id, cookie);
    expect(late.status).toBe(400);
    expect(m.state.codes.size).toBe(0);
  });
});
