import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditEvents, passwordCredentials } from "@/db/schema";
import { findPendingAuthRequest } from "@/lib/store/auth-requests";
import { findUserAgent } from "@/lib/store/sessions";
import { startTestInstance, type TestInstance } from "./harness";
import { authRequestOf, Browser, callbackOf, locationOf, makeClientWithSecret, makeUser, pkceRequest, redirectParams, REDIRECT } from "./authorize-support";
import type { Client } from "@/lib/store/clients";
import { basic, token, verify, VERIFIER } from "./token-support";

// The sign-in's "choose a new password" step: an administrator's demand for a new password, and
// a password older than the settings allow (lib/login/signin-policy.ts `password_expired`).
let t: TestInstance;
let client: Client;
let secret: string;
beforeAll(async () => {
  t = await startTestInstance();
  ({ client, secret } = await makeClientWithSecret(t));
});
afterAll(async () => t.close());

const OLD_PASSWORD = "correct horse battery";
const NEW_PASSWORD = "a brand new passphrase";
const authorize = (extra: Record<string, string> = {}) => pkceRequest(client.id, extra);
const changePage = (flow: string) => `/ui/login/password/change?authRequest=${encodeURIComponent(flow)}`;
const patchUser = (id: string, json: Record<string, unknown>) => t.api(`/management/v1/users/${id}`, { method: "PATCH", json });
const getUser = async (id: string) => (await (await t.api(`/management/v1/users/${id}`)).json()) as Record<string, unknown>;

/** Login name and password in a new browser; returns the browser, the flow and where the callback sends it. */
async function signIn(username: string, password = OLD_PASSWORD, b = new Browser(t)) {
  const flow = authRequestOf(await b.authorize(authorize()));
  await b.post("loginname", flow, { loginName: username });
  const r = await b.post("password", flow, { password });
  expect(locationOf(r)).toBe(callbackOf(flow));
  return { b, flow, next: await b.callback(locationOf(r)) };
}

async function subOfCode(res: Response): Promise<string> {
  const code = redirectParams(res).get("code");
  expect(code).toBeTruthy();
  const body = (await token(t, { grant_type: "authorization_code", code: code!, redirect_uri: REDIRECT, code_verifier: VERIFIER }, { auth: basic(client.id, secret) })).body;
  return (await verify(t, body.id_token as string)).payload.sub!;
}

/** The reason the change page shows for the last refused form. */
async function formErrorOf(b: Browser, flow: string) {
  const ua = await findUserAgent(t.inst.db, b.cookies.get("torii_ua")!);
  const pending = await findPendingAuthRequest(t.inst.db, flow, ua!.id, new Date());
  return [pending!.formError, pending!.formValues];
}

/** Whether the password signs the user in (a fresh browser), without the change step's judgement. */
async function passwordWorks(username: string, password: string): Promise<boolean> {
  const b = new Browser(t);
  const flow = authRequestOf(await b.authorize(authorize()));
  await b.post("loginname", flow, { loginName: username });
  return locationOf(await b.post("password", flow, { password })) === callbackOf(flow);
}

describe("an administrator requires a new password", () => {
  it("the next sign-in asks for one before any code; bad choices come back with their reason; the new one finishes", async () => {
    const user = await makeUser(t, "pia");
    const marked = await patchUser(user.id, { passwordChangeRequired: true });
    expect(marked.status).toBe(200);
    expect((await marked.json()).passwordChangeRequired).toBe(true);

    const { b, flow, next } = await signIn("pia");
    expect(locationOf(next)).toBe(changePage(flow));
    // Leaving the page does not get around it: a new request, even prompt=none, of this browser.
    expect(locationOf(await b.authorize(authorize()))).toContain("/ui/login/password/change?");
    expect(redirectParams(await b.authorize(authorize({ prompt: "none" }))).get("error")).toBe("interaction_required");

    // Only the form of this step, with its CSRF token.
    expect(locationOf(await b.post("password-change", flow, { password: NEW_PASSWORD, confirm: NEW_PASSWORD }, { csrf: "forged" }))).toBe("/ui/login/error?code=csrf");
    expect(locationOf(await b.post("password-change", flow, { password: NEW_PASSWORD, confirm: "something else" }))).toBe(changePage(flow));
    expect(await formErrorOf(b, flow)).toEqual(["mismatch", null]);
    expect(locationOf(await b.post("password-change", flow, { password: "short", confirm: "short" }))).toBe(changePage(flow));
    expect(await formErrorOf(b, flow)).toEqual(["policy", { violations: "minLength" }]);
    expect(locationOf(await b.post("password-change", flow, { password: OLD_PASSWORD, confirm: OLD_PASSWORD }))).toBe(changePage(flow));
    expect(await formErrorOf(b, flow)).toEqual(["samePassword", null]);
    expect(await passwordWorks("pia", OLD_PASSWORD)).toBe(true);

    const done = await b.post("password-change", flow, { password: NEW_PASSWORD, confirm: NEW_PASSWORD });
    expect(locationOf(done)).toBe(callbackOf(flow));
    expect(await subOfCode(await b.callback(locationOf(done)))).toBe(user.id);

    expect((await getUser(user.id)).passwordChangeRequired).toBe(false);
    expect(await passwordWorks("pia", OLD_PASSWORD)).toBe(false);
    const again = await signIn("pia", NEW_PASSWORD);
    expect(await subOfCode(again.next)).toBe(user.id);
    const events = await t.inst.db.select().from(auditEvents).where(and(eq(auditEvents.action, "user.password_changed"), eq(auditEvents.targetId, user.id)));
    expect(events.map((e) => e.details)).toEqual([expect.objectContaining({ reason: "required", during: "signin" })]);
  });

  it("a session signed in before the demand goes on (prompt=none too); its other sessions end once the password is changed", async () => {
    const user = await makeUser(t, "quin");
    const before = await signIn("quin");
    expect(await subOfCode(before.next)).toBe(user.id);
    await patchUser(user.id, { passwordChangeRequired: true });
    expect(await subOfCode(await before.b.authorize(authorize({ prompt: "none" })))).toBe(user.id);

    const { b, flow, next } = await signIn("quin");
    expect(locationOf(next)).toBe(changePage(flow));
    expect(locationOf(await b.post("password-change", flow, { password: NEW_PASSWORD, confirm: NEW_PASSWORD }))).toBe(callbackOf(flow));
    // Whoever knew the old password is signed out elsewhere.
    expect(redirectParams(await before.b.authorize(authorize({ prompt: "none" }))).get("error")).toBe("login_required");
  });

  it("a password an administrator sets as temporary must be replaced; one set without stays", async () => {
    const user = await makeUser(t, "rhea");
    const temporary = await t.api(`/management/v1/users/${user.id}/password`, { method: "POST", json: { password: "temporary passphrase 1", passwordChangeRequired: true } });
    expect(temporary.status).toBe(204);
    expect((await getUser(user.id)).passwordChangeRequired).toBe(true);
    const first = await signIn("rhea", "temporary passphrase 1");
    expect(locationOf(first.next)).toBe(changePage(first.flow));

    await t.api(`/management/v1/users/${user.id}/password`, { method: "POST", json: { password: "settled passphrase 2" } });
    expect((await getUser(user.id)).passwordChangeRequired).toBe(false);
    expect(await subOfCode((await signIn("rhea", "settled passphrase 2")).next)).toBe(user.id);
  });

  it("can be set when the user is created, and lifted again", async () => {
    const created = await t.api("/management/v1/users", { method: "POST", json: { username: "sven", password: OLD_PASSWORD, passwordChangeRequired: true } });
    expect(created.status).toBe(201);
    const sven = (await created.json()) as { id: string; passwordChangeRequired: boolean };
    expect(sven.passwordChangeRequired).toBe(true);
    const lifted = await patchUser(sven.id, { passwordChangeRequired: false });
    expect((await lifted.json()).passwordChangeRequired).toBe(false);
    expect(await subOfCode((await signIn("sven")).next)).toBe(sven.id);
    expect((await patchUser(sven.id, { passwordChangeRequired: "yes" })).status).toBe(400);
  });
});

describe("passwords older than the settings allow (passwordPolicy.maxAgeDays)", () => {
  it("off by default; once set, a sign-in with an older password asks for a new one, and the new one restarts the count", async () => {
    const settings = (await (await t.api("/management/v1/settings")).json()) as { passwordPolicy: { maxAgeDays: number } };
    expect(settings.passwordPolicy.maxAgeDays).toBe(0);
    const user = await makeUser(t, "tove");
    const longAgo = new Date(Date.now() - 400 * 86_400_000);
    await t.inst.db.update(passwordCredentials).set({ changedAt: longAgo }).where(eq(passwordCredentials.userId, user.id));
    expect(await subOfCode((await signIn("tove")).next)).toBe(user.id);

    const put = await t.api("/management/v1/settings", { method: "PUT", json: { passwordPolicy: { maxAgeDays: 90 } } });
    expect((await put.json()).passwordPolicy).toMatchObject({ maxAgeDays: 90, minLength: 10 });
    try {
      const { b, flow, next } = await signIn("tove");
      expect(locationOf(next)).toBe(changePage(flow));
      expect(locationOf(await b.post("password-change", flow, { password: NEW_PASSWORD, confirm: NEW_PASSWORD }))).toBe(callbackOf(flow));
      expect(await subOfCode(await b.callback(callbackOf(flow)))).toBe(user.id);
      expect(await subOfCode((await signIn("tove", NEW_PASSWORD)).next)).toBe(user.id);
      const [event] = await t.inst.db.select().from(auditEvents).where(and(eq(auditEvents.action, "user.password_changed"), eq(auditEvents.targetId, user.id)));
      expect(event?.details).toMatchObject({ reason: "expired" });
    } finally {
      await t.api("/management/v1/settings", { method: "PUT", json: { passwordPolicy: { maxAgeDays: 0 } } });
    }
    expect((await t.api("/management/v1/settings", { method: "PUT", json: { passwordPolicy: { maxAgeDays: -1 } } })).status).toBe(400);
  });
});
