import { createHash, generateKeyPairSync, sign } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Secret, TOTP } from "otpauth";
import { totpEnrolment } from "@/lib/login/second-factor";
import { recoveryCodesToShow } from "@/lib/login/factor-handlers";
import { findPendingAuthRequest } from "@/lib/store/auth-requests";
import { findUserAgent } from "@/lib/store/sessions";
import { findUserByLoginName } from "@/lib/store/users";
import { ACR } from "@/lib/protocol/vocabulary";
import { eq } from "drizzle-orm";
import { userFactors } from "@/db/schema";
import { startTestInstance, type TestInstance } from "./harness";
import { authRequestOf, Browser, callbackOf, locationOf, makeClientWithSecret, makeUser, pkceRequest, redirectParams, REDIRECT } from "./authorize-support";
import type { Client } from "@/lib/store/clients";
import { basic, token, verify, VERIFIER } from "./token-support";

// Second factors at sign-in: TOTP enrolment when one is needed, the code (or a recovery code)
// when the user has one, the lockout, amr and acr in the ID token, and the administrator's side.
let t: TestInstance;
let client: Client;
let secret: string;
beforeAll(async () => {
  t = await startTestInstance();
  ({ client, secret } = await makeClientWithSecret(t));
});
afterAll(async () => t.close());

const authorize = (extra: Record<string, string> = {}) => pkceRequest(client.id, extra);
const setSettings = (json: Record<string, unknown>) => t.api("/management/v1/settings", { method: "PUT", json });

/** The code an authenticator app shows for `secretBase32`, `steps` periods from now. */
function appCode(secretBase32: string, steps = 0): string {
  return new TOTP({ secret: Secret.fromBase32(secretBase32.replace(/\s/g, "")), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: Date.now() + steps * 30_000 });
}

/** Login name and password; returns where the browser is sent next (the callback's answer followed). */
async function passwordStep(b: Browser, flow: string, username: string): Promise<Response> {
  await b.post("loginname", flow, { loginName: username });
  const r = await b.post("password", flow, { password: "correct horse battery" });
  expect(locationOf(r)).toBe(callbackOf(flow));
  return b.callback(locationOf(r));
}

async function idTokenOf(res: Response) {
  const code = redirectParams(res).get("code");
  expect(code).toBeTruthy();
  const body = (await token(t, { grant_type: "authorization_code", code: code!, redirect_uri: REDIRECT, code_verifier: VERIFIER }, { auth: basic(client.id, secret) })).body;
  return (await verify(t, body.id_token as string)).payload;
}

describe("second factors at sign-in", () => {
  let totpSecret = "";
  /** The code that confirmed the enrolment: good once, whatever the clock does before it is tried again. */
  let enrolCode = "";
  let recovery: string[] = [];
  let userId = "";

  it("optional by default: a user without a factor signs in with the password (amr pwd, acr pwd)", async () => {
    expect((await (await t.api("/management/v1/settings")).json()).mfa).toBe("optional");
    const user = await makeUser(t, "mira");
    userId = user.id;
    const b = new Browser(t);
    const start = await b.authorize(authorize());
    const claims = await idTokenOf(await passwordStep(b, authRequestOf(start), "mira"));
    expect(claims.amr).toEqual(["pwd"]);
    expect(claims.acr).toBe(ACR.password);
  });

  it("acr_values asking for a second factor makes the user enrol one: QR code secret, a wrong code refused, then recovery codes once, amr mfa", async () => {
    const b = new Browser(t);
    const start = await b.authorize(authorize({ acr_values: `${ACR.multiFactor} ${ACR.password}` }));
    const flow = authRequestOf(start);
    const atCallback = await passwordStep(b, flow, "mira");
    expect(locationOf(atCallback)).toBe(`/ui/login/factor/enrol?authRequest=${encodeURIComponent(flow)}`);
    // prompt=none cannot enrol: interaction_required.
    expect(redirectParams(await b.authorize(authorize({ acr_values: ACR.multiFactor, prompt: "none" }))).get("error")).toBe("interaction_required");

    // The page shows the pending factor; reloading it shows the same one.
    const enrolment = await totpEnrolment(t.inst, { id: userId, username: "mira" }, "Torii");
    expect((await totpEnrolment(t.inst, { id: userId, username: "mira" }, "Torii")).factorId).toBe(enrolment.factorId);
    expect(enrolment.uri).toMatch(/^otpauth:\/\/totp\/Torii:mira\?/);
    expect(enrolment.qrSvg).toContain("<svg");
    totpSecret = enrolment.secret;

    const wrong = appCode(totpSecret, 10);
    expect(locationOf(await b.post("factor-enrol", flow, { factorId: enrolment.factorId, code: wrong, name: "Phone" }))).toContain("/ui/login/factor/enrol?");
    enrolCode = appCode(totpSecret);
    const ok = await b.post("factor-enrol", flow, { factorId: enrolment.factorId, code: enrolCode, name: "Phone" });
    expect(locationOf(ok)).toBe(`/ui/login/factor/recovery-codes?authRequest=${encodeURIComponent(flow)}`);
    const ua = await findUserAgent(t.inst.db, b.cookies.get("torii_ua")!);
    const pending = await findPendingAuthRequest(t.inst.db, flow, ua!.id, new Date());
    recovery = recoveryCodesToShow(t.inst.masterKey, flow, pending!.formValues)!;
    expect(recovery).toHaveLength(10);
    expect(new Set(recovery).size).toBe(10);
    expect(recovery[0]).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    // The codes are not stored in clear anywhere the pending request's row shows.
    expect(JSON.stringify(pending!.formValues)).not.toContain(recovery[0]);

    const done = await b.post("recovery-codes", flow, {});
    expect(locationOf(done)).toBe(callbackOf(flow));
    const claims = await idTokenOf(await b.callback(locationOf(done)));
    expect(claims.amr).toEqual(["pwd", "otp", "mfa"]);
    expect(claims.acr).toBe(ACR.multiFactor);

    // The same browser's session now has the factor: another request finishes at once, even prompt=none.
    expect(redirectParams(await b.authorize(authorize({ prompt: "none" }))).get("code")).toBeTruthy();
  });

  it("a user with a factor is asked for it at every sign-in: a replayed code is refused, the next one passes", async () => {
    const b = new Browser(t);
    const start = await b.authorize(authorize());
    const flow = authRequestOf(start);
    const atCallback = await passwordStep(b, flow, "mira");
    expect(locationOf(atCallback)).toBe(`/ui/login/factor?authRequest=${encodeURIComponent(flow)}`);
    expect(redirectParams(await b.authorize(authorize({ prompt: "none" }))).get("error")).toBe("interaction_required");
    // The code used at enrolment was for this 30-second step: it is good once.
    expect(locationOf(await b.post("factor", flow, { code: enrolCode }))).toContain("/ui/login/factor?");
    const next = await b.post("factor", flow, { code: appCode(totpSecret, 1) });
    expect(locationOf(next)).toBe(callbackOf(flow));
    expect(next.headers.getSetCookie().some((c) => c.startsWith("torii_device"))).toBe(true);
    const claims = await idTokenOf(await b.callback(locationOf(next)));
    expect(claims.amr).toEqual(["pwd", "otp", "mfa"]);
  });

  it("a recovery code works once, in any spelling; the administrator sees how many are left", async () => {
    const first = new Browser(t);
    const flow1 = authRequestOf(await first.authorize(authorize()));
    await passwordStep(first, flow1, "mira");
    const spelled = ` ${recovery[0]!.toUpperCase().replace("-", " ")} `;
    const ok = await first.post("factor", flow1, { code: spelled });
    expect(locationOf(ok)).toBe(callbackOf(flow1));
    expect((await idTokenOf(await first.callback(locationOf(ok)))).amr).toContain("mfa");

    const second = new Browser(t);
    const flow2 = authRequestOf(await second.authorize(authorize()));
    await passwordStep(second, flow2, "mira");
    expect(locationOf(await second.post("factor", flow2, { code: recovery[0]! }))).toContain("/ui/login/factor?");

    const list = await (await t.api(`/management/v1/users/${userId}/factors`)).json();
    expect(list.recoveryCodesRemaining).toBe(9);
    expect(list.factors).toMatchObject([{ type: "totp", name: "Phone" }]);
    expect(list.factors[0].lastUsedAt).toBeTruthy();
  });

  it("wrong codes count toward the account's lock; the right code is then refused too, and the lock is audited", async () => {
    await setSettings({ lockoutPolicy: { freeFailures: 100, lockAfterFailures: 3 } });
    try {
      const b = new Browser(t);
      const flow = authRequestOf(await b.authorize(authorize()));
      await passwordStep(b, flow, "mira");
      for (let i = 0; i < 3; i++) expect(locationOf(await b.post("factor", flow, { code: "000000" }))).toContain("/ui/login/factor?");
      const refused = await b.post("factor", flow, { code: appCode(totpSecret, -1) });
      expect(locationOf(refused)).toContain("/ui/login/factor?");
      const ua = await findUserAgent(t.inst.db, b.cookies.get("torii_ua")!);
      expect((await findPendingAuthRequest(t.inst.db, flow, ua!.id, new Date()))!.formError).toBe("accountLocked");
      const audit = await (await t.api(`/management/v1/audit?action=user.lockout&targetId=${userId}`)).json();
      expect(JSON.stringify(audit)).toContain("user.lockout");
      const lock = await (await t.api(`/management/v1/users/${userId}/lockout`)).json();
      expect(lock.locked).toBe(true);
    } finally {
      await t.api(`/management/v1/users/${userId}/lockout`, { method: "DELETE" });
      await setSettings({ lockoutPolicy: { freeFailures: 5, lockAfterFailures: 50 } });
    }
  });

  it("off: nobody is asked; required: a user without a factor enrols at the next sign-in", async () => {
    await setSettings({ mfa: "off" });
    try {
      const b = new Browser(t);
      const start = await b.authorize(authorize());
      const claims = await idTokenOf(await passwordStep(b, authRequestOf(start), "mira"));
      expect(claims.amr).toEqual(["pwd"]);
    } finally {
      await setSettings({ mfa: "optional" });
    }
    await makeUser(t, "noor");
    await setSettings({ mfa: "required" });
    try {
      const b = new Browser(t);
      const flow = authRequestOf(await b.authorize(authorize()));
      expect(locationOf(await passwordStep(b, flow, "noor"))).toBe(`/ui/login/factor/enrol?authRequest=${encodeURIComponent(flow)}`);
    } finally {
      await setSettings({ mfa: "optional" });
    }
  });

  it("the administrator removes the factors: the user signs in with the password again; unknown ids are 404", async () => {
    const list = await (await t.api(`/management/v1/users/${userId}/factors`)).json();
    expect((await t.api(`/management/v1/users/${userId}/factors/nope`, { method: "DELETE" })).status).toBe(404);
    expect((await t.api(`/management/v1/users/nope/factors`)).status).toBe(404);
    const removed = await t.api(`/management/v1/users/${userId}/factors/${list.factors[0].id as string}`, { method: "DELETE" });
    expect(removed.status).toBe(200);
    expect((await removed.json()).factors).toEqual([]);
    const reset = await (await t.api(`/management/v1/users/${userId}/factors`, { method: "DELETE" })).json();
    expect(reset).toEqual({ factors: [], recoveryCodesRemaining: 0 });
    const b = new Browser(t);
    const claims = await idTokenOf(await passwordStep(b, authRequestOf(await b.authorize(authorize())), "mira"));
    expect(claims.amr).toEqual(["pwd"]);
  });

  it("discovery lists the classes; an essential acr claim Torii has is met, one it lacks is unmet_authentication_requirements", async () => {
    const doc = await (await fetch(`${t.baseUrl}/.well-known/openid-configuration`)).json();
    expect(doc.acr_values_supported).toEqual([ACR.password, ACR.multiFactor]);
    expect(doc.claims_supported).toContain("acr");
    const b = new Browser(t);
    const lacking = await b.authorize(authorize({ claims: JSON.stringify({ id_token: { acr: { essential: true, values: ["urn:other:gold"] } } }) }));
    expect(redirectParams(lacking).get("error")).toBe("unmet_authentication_requirements");
    const flow = authRequestOf(await b.authorize(authorize({ claims: JSON.stringify({ id_token: { acr: { essential: true, value: ACR.multiFactor } } }) })));
    expect(locationOf(await passwordStep(b, flow, "mira"))).toContain("/ui/login/factor/enrol?");
  });

  it("an essential multi-factor acr that cannot be met now is unmet_authentication_requirements: without the user (prompt=none), or with second factors off; met by a session with a factor", async () => {
    const essential = (values: string[]) => JSON.stringify({ id_token: { acr: { essential: true, values } } });
    await makeUser(t, "ursula");
    const b = new Browser(t);
    await passwordStep(b, authRequestOf(await b.authorize(authorize())), "ursula");
    // Signed in with a password only: prompt=none cannot add a factor.
    const silent = await b.authorize(authorize({ prompt: "none", claims: essential([ACR.multiFactor]) }));
    expect(redirectParams(silent).get("error")).toBe("unmet_authentication_requirements");
    expect(redirectParams(silent).get("state")).toBeNull();
    // A voluntary acr_values is only a wish: prompt=none says an interaction is needed.
    expect(redirectParams(await b.authorize(authorize({ prompt: "none", acr_values: ACR.multiFactor }))).get("error")).toBe("interaction_required");
    // The password class (preferred here) is acceptable too: the session meets it.
    expect(redirectParams(await b.authorize(authorize({ prompt: "none", claims: essential([ACR.password, ACR.multiFactor]) }))).get("code")).toBeTruthy();
    // With the user there, the essential class makes them enrol a factor.
    expect(locationOf(await b.authorize(authorize({ claims: essential([ACR.multiFactor]) })))).toContain("/ui/login/factor/enrol?");

    // Second factors switched off: the class can never be met, even with the user there.
    await setSettings({ mfa: "off" });
    try {
      expect(redirectParams(await b.authorize(authorize({ claims: essential([ACR.multiFactor]) }))).get("error")).toBe("unmet_authentication_requirements");
      const fresh = new Browser(t);
      const flow = authRequestOf(await fresh.authorize(authorize({ claims: essential([ACR.multiFactor]) })));
      const answer = await passwordStep(fresh, flow, "ursula");
      expect(redirectParams(answer).get("error")).toBe("unmet_authentication_requirements");
    } finally {
      await setSettings({ mfa: "optional" });
    }
  });
});

describe("removing factors: one rule for the owner and the administrator", () => {
  it("the last factor takes the recovery codes; the owner cannot remove it while factors are required, the administrator can, and the next sign-in enrols", async () => {
    const { removeSecondFactor } = await import("@/lib/login/second-factor");
    const { replaceRecoveryCodes } = await import("@/lib/store/factors");
    const user = await makeUser(t, "rhea");
    const confirmedAt = new Date();
    await t.inst.db.insert(userFactors).values([
      { id: "rhea-key-1", userId: user.id, type: "webauthn", name: "Key 1", credentialId: "rhea-cred-1", publicKey: "x", signCount: 0, confirmedAt },
      { id: "rhea-key-2", userId: user.id, type: "webauthn", name: "Key 2", credentialId: "rhea-cred-2", publicKey: "x", signCount: 0, confirmedAt },
    ]);
    await replaceRecoveryCodes(t.inst.db, t.inst.masterKey, user.id, Array.from({ length: 10 }, (_, i) => `code${i}`), new Date());
    const owner = { type: "user" as const, id: user.id };
    const list = async () => (await t.api(`/management/v1/users/${user.id}/factors`)).json();

    await setSettings({ mfa: "required" });
    try {
      expect(await removeSecondFactor(t.inst.db, user.id, "rhea-key-1", owner, { byOwner: true, mfa: "required" })).toEqual({ ok: true });
      expect(await list()).toMatchObject({ factors: [{ name: "Key 2" }], recoveryCodesRemaining: 10 });
      // The owner's last one, while factors are required: refused, nothing changes.
      expect(await removeSecondFactor(t.inst.db, user.id, "rhea-key-2", owner, { byOwner: true, mfa: "required" })).toEqual({ ok: false, reason: "required" });
      expect(await removeSecondFactor(t.inst.db, user.id, "rhea-key-1", owner, { byOwner: true, mfa: "required" })).toEqual({ ok: false, reason: "gone" });
      expect((await list()).recoveryCodesRemaining).toBe(10);
      // The administrator removes it: the recovery codes go with it, as on the account page.
      const removed = await t.api(`/management/v1/users/${user.id}/factors/rhea-key-2`, { method: "DELETE" });
      expect(removed.status).toBe(200);
      expect(await removed.json()).toEqual({ factors: [], recoveryCodesRemaining: 0 });
      expect((await t.api(`/management/v1/users/${user.id}/factors/rhea-key-2`, { method: "DELETE" })).status).toBe(404);
      // The next sign-in enrols a factor before it finishes.
      const b = new Browser(t);
      const flow = authRequestOf(await b.authorize(authorize()));
      expect(locationOf(await passwordStep(b, flow, "rhea"))).toBe(`/ui/login/factor/enrol?authRequest=${encodeURIComponent(flow)}`);
      const events = await (await t.api(`/management/v1/audit?action=user.factor.removed&targetId=${user.id}`)).json();
      expect(events.events).toHaveLength(2);
    } finally {
      await setSettings({ mfa: "optional" });
    }
  });
});

describe("passkeys: bad answers change nothing", () => {
  it("a passkey answer without a prompt, malformed, or for an unknown credential is refused on the login page, and the prompt's challenge is used once", async () => {
    const { handleSubmitPasskeySignIn, loginPasskeyPrompt } = await import("@/lib/login/passkey-handlers");
    const b = new Browser(t);
    const flow = authRequestOf(await b.authorize(authorize()));
    const post = async (response: string, fields: Record<string, string> = {}) => {
      const csrf = await b.csrf(flow);
      return handleSubmitPasskeySignIn(
        t.inst,
        b.request("/ui/login/submit/passkey", {
          method: "POST",
          body: new URLSearchParams({ authRequest: flow, csrf, response, ...fields }).toString(),
          headers: { "content-type": "application/x-www-form-urlencoded", origin: t.baseUrl },
        }),
      );
    };
    const loginPage = `/ui/login?authRequest=${encodeURIComponent(flow)}`;
    // No prompt was shown: no challenge to answer.
    expect(locationOf(await post("{}"))).toBe(loginPage);
    const options = JSON.parse(await loginPasskeyPrompt(t.inst, flow)) as { challenge: string; rpId: string; userVerification: string };
    expect(options.rpId).toBe(new URL(t.issuer).hostname);
    expect(options.userVerification).toBe("required");
    // Malformed: refused, and the challenge is spent.
    expect(locationOf(await post("not json"))).toBe(loginPage);
    await loginPasskeyPrompt(t.inst, flow);
    const unknown = { id: "AAAA", rawId: "AAAA", type: "public-key", response: { clientDataJSON: "", authenticatorData: "", signature: "" }, clientExtensionResults: {} };
    expect(locationOf(await post(JSON.stringify(unknown)))).toBe(loginPage);
    const ua = await findUserAgent(t.inst.db, b.cookies.get("torii_ua")!);
    const pending = await findPendingAuthRequest(t.inst.db, flow, ua!.id, new Date());
    expect(pending).toMatchObject({ formError: "passkeyFailed", sessionId: null, webauthnChallenge: null });
    // The password page offers a passkey too: a refusal there shows the password page again
    // (the login page while no login name was given).
    expect(locationOf(await post("{}", { page: "password" }))).toBe(loginPage);
    expect(locationOf(await b.post("loginname", flow, { loginName: "nobody-here" }))).toBe(`/ui/login/password?authRequest=${encodeURIComponent(flow)}`);
    await loginPasskeyPrompt(t.inst, flow);
    expect(locationOf(await post(JSON.stringify(unknown), { page: "password" }))).toBe(`/ui/login/password?authRequest=${encodeURIComponent(flow)}`);
    expect(await findPendingAuthRequest(t.inst.db, flow, ua!.id, new Date())).toMatchObject({ formError: "passkeyFailed", sessionId: null, webauthnChallenge: null });
  });
});

describe("passkeys: the relying party and origin are checked", () => {
  // A passkey answer made by hand: an ES256 key of our own registered as a user's passkey, and
  // assertions signed with it for chosen origins, relying party IDs and counters.
  const b64 = (b: Buffer) => b.toString("base64url");
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = publicKey.export({ format: "jwk" });
  // COSE_Key (RFC 9053): kty EC2, alg ES256, crv P-256, x, y, as CBOR.
  const cose = Buffer.concat([
    Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]),
    Buffer.from(jwk.x!, "base64url"),
    Buffer.from([0x22, 0x58, 0x20]),
    Buffer.from(jwk.y!, "base64url"),
  ]);
  const credentialId = b64(Buffer.from("handmade-credential-0001"));

  function assertion(o: { challenge: string; origin: string; rpId: string; counter: number }) {
    const clientData = Buffer.from(JSON.stringify({ type: "webauthn.get", challenge: o.challenge, origin: o.origin, crossOrigin: false }));
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(o.counter);
    // rpIdHash, flags (user present + user verified), signature counter.
    const authData = Buffer.concat([createHash("sha256").update(o.rpId).digest(), Buffer.from([0x05]), counter]);
    const signature = sign("sha256", Buffer.concat([authData, createHash("sha256").update(clientData).digest()]), privateKey);
    return JSON.stringify({
      id: credentialId,
      rawId: credentialId,
      type: "public-key",
      response: { clientDataJSON: b64(clientData), authenticatorData: b64(authData), signature: b64(signature) },
      clientExtensionResults: {},
    });
  }

  it("only an answer for this issuer's origin and host, with a counter that moves forward, signs in", async () => {
    const { handleSubmitPasskeySignIn, loginPasskeyPrompt } = await import("@/lib/login/passkey-handlers");
    const user = await makeUser(t, "pia");
    await t.inst.db.insert(userFactors).values({
      id: "handmade-passkey",
      userId: user.id,
      type: "webauthn",
      name: "Handmade",
      credentialId,
      publicKey: b64(cose),
      signCount: 5,
      deviceType: "singleDevice",
      confirmedAt: new Date(),
    });
    const { origin, hostname } = new URL(t.issuer);
    const tryWith = async (o: { origin?: string; rpId?: string; counter: number }) => {
      const b = new Browser(t);
      const flow = authRequestOf(await b.authorize(authorize()));
      const { challenge } = JSON.parse(await loginPasskeyPrompt(t.inst, flow)) as { challenge: string };
      const res = await handleSubmitPasskeySignIn(
        t.inst,
        b.request("/ui/login/submit/passkey", {
          method: "POST",
          body: new URLSearchParams({ authRequest: flow, csrf: await b.csrf(flow), response: assertion({ challenge, origin: o.origin ?? origin, rpId: o.rpId ?? hostname, counter: o.counter }) }).toString(),
          headers: { "content-type": "application/x-www-form-urlencoded", origin: t.baseUrl },
        }),
      );
      return locationOf(res);
    };
    const refused = (loc: string) => {
      expect(loc).toMatch(/^\/ui\/login\?authRequest=/);
    };
    refused(await tryWith({ origin: "https://evil.example", counter: 6 })); // another site's page
    refused(await tryWith({ rpId: "evil.example", counter: 6 })); // a credential of another relying party
    refused(await tryWith({ counter: 5 })); // the counter did not move: a cloned authenticator
    expect(await tryWith({ counter: 6 })).toMatch(/^\/oauth\/v2\/authorize\/callback\?id=/);
    refused(await tryWith({ counter: 6 })); // the same counter again
    // Second factors switched off: passkeys are not taken either.
    await setSettings({ mfa: "off" });
    try {
      refused(await tryWith({ counter: 7 }));
    } finally {
      await setSettings({ mfa: "optional" });
    }
    expect(await tryWith({ counter: 8 })).toMatch(/^\/oauth\/v2\/authorize\/callback\?id=/);
  });

  /** Posts a passkey answer to the login page's handler; the browser keeps the cookies it is given. */
  async function postAnswer(b: Browser, flow: string, response: string): Promise<string> {
    const { handleSubmitPasskeySignIn } = await import("@/lib/login/passkey-handlers");
    const res = await handleSubmitPasskeySignIn(
      t.inst,
      b.request("/ui/login/submit/passkey", {
        method: "POST",
        body: new URLSearchParams({ authRequest: flow, csrf: await b.csrf(flow), response }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded", origin: t.baseUrl },
      }),
    );
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair!.indexOf("=");
      b.cookies.set(pair!.slice(0, i), decodeURIComponent(pair!.slice(i + 1)));
    }
    return locationOf(res);
  }
  const promptOf = async (flow: string) => {
    const { loginPasskeyPrompt } = await import("@/lib/login/passkey-handlers");
    return (JSON.parse(await loginPasskeyPrompt(t.inst, flow)) as { challenge: string }).challenge;
  };
  const signedIn = /^\/oauth\/v2\/authorize\/callback\?id=/;
  const onLoginPage = /^\/ui\/login\?authRequest=/;

  it("an answer is good once: an answer to an earlier prompt is refused though its counter is fresh, and the accepted answer cannot be replayed", async () => {
    const { origin, hostname } = new URL(t.issuer);
    const b = new Browser(t);
    const flow = authRequestOf(await b.authorize(authorize()));
    const stale = assertion({ challenge: await promptOf(flow), origin, rpId: hostname, counter: 10 });
    // The page was shown again (a new challenge): the answer to the first prompt is refused.
    await promptOf(flow);
    expect(await postAnswer(b, flow, stale)).toMatch(onLoginPage);
    // The same counter with the current challenge passes: it was the challenge that refused it.
    const good = assertion({ challenge: await promptOf(flow), origin, rpId: hostname, counter: 10 });
    expect(await postAnswer(b, flow, good)).toMatch(signedIn);
    // Replayed, to this request (after a new prompt) or to another browser's: refused.
    await promptOf(flow);
    expect(await postAnswer(b, flow, good)).toMatch(onLoginPage);
    const other = new Browser(t);
    const otherFlow = authRequestOf(await other.authorize(authorize()));
    await promptOf(otherFlow);
    expect(await postAnswer(other, otherFlow, good)).toMatch(onLoginPage);
  });

  it("a passkey does not get round the account's lock: refused in a browser that never signed in to it, taken in one that did", async () => {
    const { origin, hostname } = new URL(t.issuer);
    let counter = 20;
    const withPasskey = async (b: Browser) => {
      const flow = authRequestOf(await b.authorize(authorize({ prompt: "login" })));
      const loc = await postAnswer(b, flow, assertion({ challenge: await promptOf(flow), origin, rpId: hostname, counter: counter++ }));
      return { loc, flow };
    };
    const owners = new Browser(t);
    expect((await withPasskey(owners)).loc).toMatch(signedIn);
    expect([...owners.cookies.keys()].some((k) => k.startsWith("torii_device"))).toBe(true);
    const piaId = (await findUserByLoginName(t.inst.db, "pia", ""))!.id;

    const before = (await (await t.api("/management/v1/settings")).json()).lockoutPolicy;
    await setSettings({ lockoutPolicy: { freeFailures: 100, lockAfterFailures: 3 } });
    try {
      // Someone guesses the password from elsewhere until the account locks for such browsers.
      const guesser = new Browser(t);
      guesser.headers["x-torii-client-address"] = "10.9.9.9";
      const g = authRequestOf(await guesser.authorize(authorize()));
      await guesser.post("loginname", g, { loginName: "pia" });
      for (let i = 0; i < 3; i++) await guesser.post("password", g, { password: `wrong guess ${i}` });
      expect((await (await t.api(`/management/v1/users/${piaId}/lockout`)).json()).locked).toBe(true);

      // A valid passkey answer from a browser that never signed in: refused, no session, the lock named.
      const stranger = new Browser(t);
      const { loc, flow } = await withPasskey(stranger);
      expect(loc).toMatch(onLoginPage);
      const ua = await findUserAgent(t.inst.db, stranger.cookies.get("torii_ua")!);
      expect(await findPendingAuthRequest(t.inst.db, flow, ua!.id, new Date())).toMatchObject({ formError: "accountLocked", sessionId: null });
      // The owner's browser (device cookie) still signs in with it.
      expect((await withPasskey(owners)).loc).toMatch(signedIn);
    } finally {
      await t.api(`/management/v1/users/${piaId}/lockout`, { method: "DELETE" });
      await setSettings({ lockoutPolicy: before });
    }
  });
});

describe("passkey registration: the challenge is the server's, used once, for minutes", () => {
  // A registration answer made by hand ("none" attestation): CBOR {fmt, attStmt, authData} with
  // the credential's id and an ES256 public key in authData.
  const b64 = (b: Buffer) => b.toString("base64url");
  const cborText = (s: string) => Buffer.concat([Buffer.from([0x60 + s.length]), Buffer.from(s)]);
  function registrationAnswer(challenge: string, credential: string) {
    const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const jwk = publicKey.export({ format: "jwk" });
    const cose = Buffer.concat([
      Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]),
      Buffer.from(jwk.x!, "base64url"),
      Buffer.from([0x22, 0x58, 0x20]),
      Buffer.from(jwk.y!, "base64url"),
    ]);
    const id = Buffer.from(credential);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    // rpIdHash, flags (user present, user verified, attested credential data), counter 0, AAGUID.
    const authData = Buffer.concat([createHash("sha256").update(new URL(t.issuer).hostname).digest(), Buffer.from([0x45]), Buffer.alloc(4), Buffer.alloc(16), idLength, id, cose]);
    const authLength = Buffer.alloc(2);
    authLength.writeUInt16BE(authData.length);
    const attestation = Buffer.concat([Buffer.from([0xa3]), cborText("fmt"), cborText("none"), cborText("attStmt"), Buffer.from([0xa0]), cborText("authData"), Buffer.from([0x59]), authLength, authData]);
    const clientData = Buffer.from(JSON.stringify({ type: "webauthn.create", challenge, origin: new URL(t.issuer).origin, crossOrigin: false }));
    return JSON.stringify({
      id: b64(id),
      rawId: b64(id),
      type: "public-key",
      response: { clientDataJSON: b64(clientData), attestationObject: b64(attestation), transports: ["internal"] },
      clientExtensionResults: {},
    });
  }

  it("an answer registers once; an answer to an earlier prompt, a replay, and a late answer are refused", async () => {
    const { passkeyRegistration, confirmPasskeyRegistration } = await import("@/lib/login/passkeys");
    const user = await makeUser(t, "reggie");
    const actor = { type: "user" as const, id: user.id };
    const start = () => passkeyRegistration(t.inst, { id: user.id, username: "reggie", givenName: null, familyName: null }, "Torii");
    const confirm = (factorId: string, response: string) => confirmPasskeyRegistration(t.inst, user.id, factorId, { response, name: "Key" }, actor);

    // The prompt was shown again: the answer to the first one matches no challenge.
    const first = await start();
    const second = await start();
    expect((await confirm(second.factorId, registrationAnswer(first.options.challenge, "cred-earlier"))).ok).toBe(false);
    expect((await confirm(first.factorId, registrationAnswer(first.options.challenge, "cred-earlier"))).ok).toBe(false);

    const third = await start();
    const answer = registrationAnswer(third.options.challenge, "cred-good");
    expect(await confirm(third.factorId, answer)).toMatchObject({ ok: true });
    // Replayed, to the same registration or to a new one: refused, still one passkey.
    expect((await confirm(third.factorId, answer)).ok).toBe(false);
    const fourth = await start();
    expect((await confirm(fourth.factorId, answer)).ok).toBe(false);

    // An answer after the challenge's time is refused; the same answer in time is taken.
    const late = await start();
    await t.inst.db
      .update(userFactors)
      .set({ createdAt: new Date(Date.now() - 11 * 60_000) })
      .where(eq(userFactors.id, late.factorId));
    expect((await confirm(late.factorId, registrationAnswer(late.options.challenge, "cred-late"))).ok).toBe(false);
    const inTime = await start();
    expect((await confirm(inTime.factorId, registrationAnswer(inTime.options.challenge, "cred-late"))).ok).toBe(true);

    const factors = await (await t.api(`/management/v1/users/${user.id}/factors`)).json();
    expect(factors.factors.map((f: { name: string }) => f.name)).toEqual(["Key", "Key"]);
  });
});
