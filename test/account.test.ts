import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import { sessions } from "@/db/schema";
import { ACCOUNT_APP } from "@/lib/account/app";
import { handleAccountCallback, handleAccountForm, handleAccountSignIn } from "@/lib/account/handlers";
import { appAccess } from "@/lib/first-party/app-session";
import { totpEnrolment } from "@/lib/login/second-factor";
import { listFactors } from "@/lib/store/factors";
import { getUser } from "@/lib/store/users";
import { startTestInstance, type TestInstance } from "./harness";
import { authRequestOf, Browser, makeUser } from "./authorize-support";
import { basic, makeClient, makeCode, token } from "./token-support";
import { grantConsent } from "@/lib/store/consents";

// The account page's forms (lib/account): reached only through its own sign-in (a first-party
// client going through the sign-in policy), each form needs the page's CSRF token, changes to
// second factors need a recent sign-in, and bad input changes nothing.
let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(async () => t.close());

const at = (r: Response) => r.headers.get("location") ?? "";

/** Signs `username` in to the account page in a new browser; returns it with its CSRF token. */
async function signedIn(username: string, extraFactorStep?: (b: Browser, flow: string) => Promise<Response>) {
  const b = new Browser(t);
  const start = await handleAccountSignIn(t.inst, b.request("/ui/account/signin"));
  keepCookies(b, start);
  const authorize = await b.authorizeRaw(new URL(at(start)).search);
  const flow = authRequestOf(authorize);
  await b.post("loginname", flow, { loginName: username });
  let next = await b.callback(at(await b.post("password", flow, { password: "correct horse battery" })));
  if (extraFactorStep) next = await extraFactorStep(b, flow);
  return { b, access: await finishAccountSignIn(b, next) };
}

function keepCookies(b: Browser, res: Response) {
  for (const c of res.headers.getSetCookie()) b.cookies.set(c.split("=")[0]!, decodeURIComponent(c.split(";")[0]!.split("=").slice(1).join("=")));
}

/** Follows the login's redirect to the account page's callback; the page's access afterwards. */
async function finishAccountSignIn(b: Browser, next: Response) {
  expect(at(next)).toContain("/ui/account/callback?");
  const done = await handleAccountCallback(t.inst, b.request(new URL(at(next)).pathname + new URL(at(next)).search));
  expect(at(done)).toBe(`${t.issuer}/ui/account`);
  keepCookies(b, done);
  const access = await appAccess(t.inst, ACCOUNT_APP, { app: b.cookies.get(ACCOUNT_APP.cookie), userAgent: b.cookies.get("torii_ua") });
  expect(access).not.toBeNull();
  return access!;
}

function submit(b: Browser, action: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return handleAccountForm(
    t.inst,
    b.request(`/ui/account/submit/${action}`, {
      method: "POST",
      body: new URLSearchParams(fields).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: t.baseUrl, ...headers },
    }),
    action,
  );
}

const appCode = (key: string, steps = 0) =>
  new TOTP({ secret: Secret.fromBase32(key.replace(/\s/g, "")), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: Date.now() + steps * 30_000 });

describe("the account page", () => {
  it("is reached through its own sign-in; its client is first-party (no consent screen)", async () => {
    const user = await makeUser(t, "ana");
    const { access } = await signedIn("ana");
    expect(access.user.id).toBe(user.id);
    expect((await t.inst.store.clients.get(ACCOUNT_APP.clientId))?.firstParty).toBe(true);
  });

  it("refuses forms without the page's CSRF token, from another origin, unknown actions and NULs, changing nothing", async () => {
    const user = await makeUser(t, "bea");
    const { b, access } = await signedIn("bea");
    expect((await submit(b, "profile", { givenName: "Mallory" })).status).toBe(403);
    expect((await submit(b, "profile", { givenName: "Mallory", csrf: access.csrf }, { origin: "https://evil.example" })).status).toBe(403);
    expect(at(await submit(b, "nope", { csrf: access.csrf }))).toContain("error=badRequest");
    expect(at(await submit(b, "profile", { givenName: "Mal\u0000lory", csrf: access.csrf }))).toContain("error=badRequest");
    expect((await getUser(t.inst.db, user.id))!.givenName).toBe("Given");
    // Without the page's session: sent to sign in.
    const stranger = new Browser(t);
    expect(at(await submit(stranger, "profile", { givenName: "Mallory", csrf: access.csrf }))).toContain("/ui/account/signin");
    // With it, the change is made and audited.
    expect(at(await submit(b, "profile", { givenName: "Beatrice", familyName: "B", locale: "de", csrf: access.csrf }))).toContain("done=profileSaved");
    expect(await getUser(t.inst.db, user.id)).toMatchObject({ givenName: "Beatrice", locale: "de" });
    expect(at(await submit(b, "profile", { givenName: "x", locale: "xx", csrf: access.csrf }))).toContain("error=localeUnknown");
  });

  it("second factors: added with the first code (recovery codes in a sealed cookie), changed only after a recent sign-in, the last one kept when required", async () => {
    const user = await makeUser(t, "cleo");
    const { b, access } = await signedIn("cleo");
    const enrolment = await totpEnrolment(t.inst, user, "Torii");
    // Refused: the page shows the enrolment form again, with the same key.
    expect(at(await submit(b, "add-authenticator", { factorId: enrolment.factorId, code: "000000", name: "Phone", csrf: access.csrf }))).toMatch(/error=wrongCode&add=authenticator&/);
    const added = await submit(b, "add-authenticator", { factorId: enrolment.factorId, code: appCode(enrolment.secret), name: "Phone", csrf: access.csrf });
    expect(at(added)).toContain("done=authenticatorAdded");
    const codes = added.headers.getSetCookie().find((c) => c.startsWith("torii_account_codes="));
    expect(codes).toMatch(/HttpOnly/i);
    expect(codes).toMatch(/Path=\/ui\/account/);
    const [factor] = await listFactors(t.inst.db, user.id);
    expect(factor).toMatchObject({ name: "Phone", type: "totp" });

    await t.api("/management/v1/settings", { method: "PUT", json: { mfa: "required" } });
    try {
      expect(at(await submit(b, "remove-factor", { factorId: factor!.id, csrf: access.csrf }))).toContain("error=factorRequired");
    } finally {
      await t.api("/management/v1/settings", { method: "PUT", json: { mfa: "optional" } });
    }
    // A sign-in twenty minutes old is not recent enough to touch the factors.
    await t.inst.db.update(sessions).set({ authTime: new Date(Date.now() - 20 * 60_000) }).where(eq(sessions.id, access.sid));
    expect(at(await submit(b, "remove-factor", { factorId: factor!.id, csrf: access.csrf }))).toContain("error=signInAgain");
    expect(at(await submit(b, "recovery-codes", { csrf: access.csrf }))).toContain("error=signInAgain");
    expect(await listFactors(t.inst.db, user.id)).toHaveLength(1);

    // The next sign-in to the page goes through the factor, like any application's.
    const again = await signedIn("cleo", async (b2, flow) => b2.callback(at(await b2.post("factor", flow, { code: appCode(enrolment.secret, 1) }))));
    expect(at(await submit(again.b, "remove-factor", { factorId: factor!.id, csrf: again.access.csrf }))).toContain("done=factorRemoved");
    expect(await listFactors(t.inst.db, user.id)).toHaveLength(0);
  });

  it("the profile's language pins the pages' language; 'as my browser says' unpins it", async () => {
    await makeUser(t, "jana");
    const { b, access } = await signedIn("jana");
    const saved = await submit(b, "profile", { givenName: "Jana", locale: "fr", csrf: access.csrf });
    expect(at(saved)).toContain("done=profileSaved");
    expect(saved.headers.getSetCookie().find((c) => c.startsWith("torii_locale="))).toMatch(/^torii_locale=fr; Path=\//);
    const unpinned = (await submit(b, "profile", { givenName: "Jana", locale: "", csrf: access.csrf })).headers.getSetCookie().find((c) => c.startsWith("torii_locale="));
    expect(unpinned).toMatch(/^torii_locale=; Path=\/; Max-Age=0/);
    // A refused change leaves the pages' language alone.
    expect((await submit(b, "profile", { locale: "xx", csrf: access.csrf })).headers.getSetCookie().some((c) => c.startsWith("torii_locale="))).toBe(false);
    // The next sign-in to the page (an authorization that pinned the browser's language) brings the
    // profile's language back.
    await submit(b, "profile", { givenName: "Jana", locale: "it", csrf: access.csrf });
    const again = await signedIn("jana");
    expect(again.b.cookies.get("torii_locale")).toBe("it");
  });

  it("authenticators added without a name are numbered, so that they can be told apart", async () => {
    const user = await makeUser(t, "ines");
    const { b, access } = await signedIn("ines");
    for (let i = 0; i < 2; i++) {
      const enrolment = await totpEnrolment(t.inst, user, "Torii");
      expect(at(await submit(b, "add-authenticator", { factorId: enrolment.factorId, code: appCode(enrolment.secret), name: "  ", csrf: access.csrf }))).toContain("done=authenticatorAdded");
    }
    expect((await listFactors(t.inst.db, user.id)).map((f) => f.name).sort()).toEqual(["Authenticator", "Authenticator 2"]);
  });

  it("sessions and applications: only the user's own can be ended or withdrawn", async () => {
    await makeUser(t, "dora");
    await makeUser(t, "emil");
    const dora = await signedIn("dora");
    const emil = await signedIn("emil");
    expect(at(await submit(dora.b, "end-session", { sessionId: emil.access.sid, csrf: dora.access.csrf }))).toContain("error=sessionGone");
    expect(await appAccess(t.inst, ACCOUNT_APP, { app: emil.b.cookies.get(ACCOUNT_APP.cookie), userAgent: emil.b.cookies.get("torii_ua") })).not.toBeNull();
    expect(at(await submit(dora.b, "revoke-app", { clientId: "no-such-client", csrf: dora.access.csrf }))).toContain("error=appGone");
    // Ending the page's own session signs the page out.
    const own = await submit(dora.b, "end-session", { sessionId: dora.access.sid, csrf: dora.access.csrf });
    expect(at(own)).toBe(`${t.issuer}/ui/account/signed-out`);
    expect(await appAccess(t.inst, ACCOUNT_APP, { app: dora.b.cookies.get(ACCOUNT_APP.cookie), userAgent: dora.b.cookies.get("torii_ua") })).toBeNull();
  });

  it("a new address is unverified and mailed; a wrong current password is refused and audited", async () => {
    const user = await makeUser(t, "fynn");
    const { b, access } = await signedIn("fynn");
    expect(at(await submit(b, "email", { email: "not an address", csrf: access.csrf }))).toContain("error=emailInvalid");
    expect(at(await submit(b, "email", { email: "fynn.new@mail.example", csrf: access.csrf }))).toContain("done=emailChangedVerify");
    expect(await getUser(t.inst.db, user.id)).toMatchObject({ email: "fynn.new@mail.example", emailVerified: false });
    // The outbox filtered by address, in any case: the verification mail to the new address.
    const outbox = (await (await t.api("/management/v1/outbox?to=FYNN.NEW@mail.example")).json()) as { mails: { to: string; template: string }[] };
    expect(outbox.mails.map((m) => [m.to, m.template])).toEqual([["fynn.new@mail.example", "verifyEmail"]]);
    // Its code can be typed on the page (as on the sign-in page); a wrong one changes nothing.
    const verification = (await (await t.api(`/management/v1/outbox/${(outbox.mails[0] as unknown as { mailId: string }).mailId}`)).json()) as { text: string };
    const code = /(\d{6})/.exec(verification.text)![1]!;
    expect(verification.text).not.toMatch(/did not create an account/);
    expect(at(await submit(b, "confirm-email", { code: code === "000000" ? "111111" : "000000", csrf: access.csrf }))).toContain("error=emailCodeWrong");
    expect(await getUser(t.inst.db, user.id)).toMatchObject({ emailVerified: false });
    expect(at(await submit(b, "confirm-email", { code, csrf: access.csrf }))).toContain("done=emailConfirmed");
    expect(await getUser(t.inst.db, user.id)).toMatchObject({ email: "fynn.new@mail.example", emailVerified: true });
    // The address it had is told, in its owner's language, where the account's mail goes now.
    const told = (await (await t.api("/management/v1/outbox?to=fynn@mail.example")).json()) as { mails: { mailId: string; to: string; template: string }[] };
    expect(told.mails.map((m) => [m.to, m.template])).toEqual([["fynn@mail.example", "emailChanged"]]);
    const notice = (await (await t.api(`/management/v1/outbox/${told.mails[0]!.mailId}`)).json()) as { subject: string; text: string };
    expect(notice.subject).toMatch(/email address of your .+ account was changed/);
    expect(notice.text).toContain("fynn.new@mail.example");
    expect(at(await submit(b, "password", { current: "wrong", password: "Another horse 43", confirm: "Another horse 43", csrf: access.csrf }))).toContain("error=currentPasswordWrong");
    expect(at(await submit(b, "password", { current: "correct horse battery", password: "Another horse 43", confirm: "different", csrf: access.csrf }))).toContain("error=passwordMismatch");
    expect(at(await submit(b, "password", { current: "correct horse battery", password: "short", confirm: "short", csrf: access.csrf }))).toMatch(/error=passwordPolicy&violations=minLength/);
    const audit = await (await t.api(`/management/v1/audit?action=user.password_change_failed`)).json();
    expect(JSON.stringify(audit)).toContain(user.id);
  });

  it("the address changes only after a recent sign-in: a browser left signed in cannot redirect the account's mail", async () => {
    const user = await makeUser(t, "finn");
    const { b, access } = await signedIn("finn");
    // A sign-in twenty minutes old: the change is refused and nothing is mailed.
    await t.inst.db.update(sessions).set({ authTime: new Date(Date.now() - 20 * 60_000) }).where(eq(sessions.id, access.sid));
    expect(at(await submit(b, "email", { email: "mallory@evil.example", csrf: access.csrf }))).toContain("error=emailSignInAgain");
    expect(await getUser(t.inst.db, user.id)).toMatchObject({ email: "finn@mail.example", emailVerified: true });
    const mailed = (await (await t.api("/management/v1/outbox?to=mallory@evil.example")).json()) as { mails: unknown[] };
    expect(mailed.mails).toEqual([]);
    // Signed in again, it is allowed.
    const again = await signedIn("finn");
    expect(at(await submit(again.b, "email", { email: "finn.2@mail.example", csrf: again.access.csrf }))).toContain("done=emailChangedVerify");
    expect(await getUser(t.inst.db, user.id)).toMatchObject({ email: "finn.2@mail.example" });
  });

  it("the page's 'sign in again' link asks the signed-in user for their password, not for a login name", async () => {
    const user = await makeUser(t, "gina");
    await makeUser(t, "hans");
    const { b, access } = await signedIn("gina");
    // Another account signed in in the same browser: the link still names gina's.
    const other = authRequestOf(await b.authorizeRaw(new URL(at(await handleAccountSignIn(t.inst, b.request("/ui/account/signin?prompt=login")))).search));
    await b.post("loginname", other, { loginName: "hans" });
    await b.post("password", other, { password: "correct horse battery" });
    await t.inst.db.update(sessions).set({ authTime: new Date(Date.now() - 20 * 60_000) }).where(eq(sessions.id, access.sid));
    expect(at(await submit(b, "email", { email: "gina.2@mail.example", csrf: access.csrf }))).toContain("error=emailSignInAgain");

    const start = await handleAccountSignIn(t.inst, b.request("/ui/account/signin?reauth=1&returnTo=%2Fui%2Faccount"));
    keepCookies(b, start);
    const query = new URL(at(start)).searchParams;
    expect(query.get("max_age")).toBe("0");
    expect(query.get("login_hint")).toBe("gina");
    expect(query.get("prompt")).toBeNull();
    const authorize = await b.authorizeRaw(new URL(at(start)).search);
    expect([authorize.status, new URL(at(authorize), t.issuer).pathname]).toEqual([302, "/ui/login/password"]);
    const done = await finishAccountSignIn(b, await b.callback(at(await b.post("password", authRequestOf(authorize), { password: "correct horse battery" }))));
    expect(done.user.id).toBe(user.id);
    expect(done.sid).toBe(access.sid);
    expect(at(await submit(b, "email", { email: "gina.2@mail.example", csrf: done.csrf }))).toContain("done=emailChangedVerify");

    // Without the page's session the link is an ordinary sign-in that must be a new one.
    const stranger = new Browser(t);
    const fresh = new URL(at(await handleAccountSignIn(t.inst, stranger.request("/ui/account/signin?reauth=1")))).searchParams;
    expect([fresh.get("prompt"), fresh.get("max_age"), fresh.get("login_hint")]).toEqual(["login", null, null]);
  });

  it("withdrawing a third-party application's access removes the consent and ends its refresh tokens for the user (issue 14)", async () => {
    const user = await makeUser(t, "gwen");
    const { b, access } = await signedIn("gwen");
    const { client, secret } = await makeClient(t, { name: "Third party", firstParty: false });
    await grantConsent(t.inst.db, user.id, client.id, { scopes: ["openid", "offline_access"], apis: {} }, new Date());
    const { code } = await makeCode(t, { client, user, scopes: ["openid", "offline_access"] });
    const issued = await token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb" }, { auth: basic(client.id, secret!) });
    expect(issued.body.refresh_token).toBeTruthy();

    expect(at(await submit(b, "revoke-app", { clientId: client.id, csrf: access.csrf }))).toContain("done=appRevoked");
    expect((await (await t.api(`/management/v1/users/${user.id}/consents`)).json()).consents).toEqual([]);
    const refreshed = await token(t, { grant_type: "refresh_token", refresh_token: issued.body.refresh_token as string }, { auth: basic(client.id, secret!) });
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe("invalid_grant");
    const audit = await (await t.api(`/management/v1/audit?action=consent.revoked&targetId=${user.id}`)).json();
    expect(JSON.stringify(audit)).toContain(client.id);
  });
});
