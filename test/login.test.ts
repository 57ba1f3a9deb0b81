import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditEvents, users } from "@/db/schema";
import { ADDRESS_FACTOR } from "@/lib/login/lockout";
import { endSessions, liveSessions, findUserAgent } from "@/lib/store/sessions";
import { getSettings, updateSettings } from "@/lib/store/settings";
import { startTestInstance, type TestInstance } from "./harness";
import { authRequestOf, Browser, makeClient, makeUser, REDIRECT, redirectParams } from "./authorize-support";

let t: TestInstance;
let clientId: string;

beforeAll(async () => {
  t = await startTestInstance();
  clientId = (await makeClient(t)).id;
  await makeUser(t, "carol");
  await makeUser(t, "dave");
});
afterAll(() => t.close());

const base = () => ({ client_id: clientId, redirect_uri: REDIRECT, response_type: "code", scope: "openid", state: "st" });

async function passwordAttempt(b: Browser, loginName: string, password: string) {
  const id = authRequestOf(await b.authorize(base()));
  await b.post("loginname", id, { loginName });
  return { id, res: await b.post("password", id, { password }) };
}


describe("password step", () => {
  it("an unknown login name and a wrong password answer identically and are audited", async () => {
    const b = new Browser(t);
    const unknown = await passwordAttempt(b, "nobody-here", "whatever");
    const wrong = await passwordAttempt(b, "dave", "whatever");
    expect(unknown.res.status).toBe(303);
    expect(unknown.res.headers.get("location")).toBe(`/ui/login/password?authRequest=${encodeURIComponent(unknown.id)}`);
    expect(wrong.res.headers.get("location")).toBe(`/ui/login/password?authRequest=${encodeURIComponent(wrong.id)}`);
    const failed = await t.inst.db.select().from(auditEvents).where(eq(auditEvents.action, "user.signin.failed"));
    expect(failed.map((e) => e.targetId)).toEqual(expect.arrayContaining(["nobody-here", "dave"]));
    expect(failed.every((e) => (e.details as { reason: string }).reason === "invalid")).toBe(true);
  });

  it("locks a login name out after the policy's failures, even with the right password; other names still work", async () => {
    const b = new Browser(t);
    for (let i = 0; i < 5; i++) await passwordAttempt(b, "carol", "wrong-" + i);
    const { id } = await passwordAttempt(b, "carol", "correct horse battery");
    const ua = await findUserAgent(t.inst.db, b.cookies.get("torii_ua")!);
    expect(await liveSessions(t.inst.db, ua!.id)).toHaveLength(0);
    const { findPendingAuthRequest } = await import("@/lib/store/auth-requests");
    const pending = await findPendingAuthRequest(t.inst.db, id, ua!.id);
    expect(pending!.formError).toBe("lockedOut");
    expect(Number(pending!.formValues!.retryMinutes)).toBeGreaterThan(0);
    // The lockout is per name: dave from the same address signs in.
    const other = await passwordAttempt(b, "dave", "correct horse battery");
    expect(other.res.headers.get("location")).toMatch(/^\/oauth\/v2\/authorize\/callback\?id=/);
  });

  it("counts a name with and without @<primaryDomain> as one name", async () => {
    await makeUser(t, "grace");
    const { primaryDomain } = await getSettings(t.inst);
    const b = new Browser(t);
    b.headers["x-torii-client-address"] = "10.9.8.1";
    // Three failures as "grace" and two as "grace@<domain>": five in all, the default maximum.
    for (let i = 0; i < 5; i++) await passwordAttempt(b, i % 2 ? `grace@${primaryDomain.toUpperCase()}` : "grace", "wrong-" + i);
    const ua = await findUserAgent(t.inst.db, b.cookies.get("torii_ua")!);
    const { findPendingAuthRequest } = await import("@/lib/store/auth-requests");
    for (const loginName of ["grace", `grace@${primaryDomain}`]) {
      const { id, res } = await passwordAttempt(b, loginName, "correct horse battery");
      expect(res.headers.get("location")).toMatch(/^\/ui\/login\/password/);
      expect((await findPendingAuthRequest(t.inst.db, id, ua!.id))!.formError).toBe("lockedOut");
    }
    expect(await liveSessions(t.inst.db, ua!.id)).toHaveLength(0);
  });

  it("locks an address out after many failures across names", async () => {
    await updateSettings(t.inst, { lockoutPolicy: { maxFailures: 2, windowSeconds: 900 } });
    try {
      const b = new Browser(t);
      b.headers["x-torii-client-address"] = "10.9.9.9";
      for (let i = 0; i < 2 * ADDRESS_FACTOR; i++) await passwordAttempt(b, `spray-${i}`, "guess");
      const { res } = await passwordAttempt(b, "dave", "correct horse battery");
      expect(res.headers.get("location")).toMatch(/^\/ui\/login\/password/);
      const c = new Browser(t);
      c.headers["x-torii-client-address"] = "10.9.9.10";
      expect((await passwordAttempt(c, "dave", "correct horse battery")).res.headers.get("location")).toMatch(/callback/);
    } finally {
      await updateSettings(t.inst, { lockoutPolicy: { maxFailures: 5, windowSeconds: 900 } });
    }
  });

  it("an administratively locked user gets no session", async () => {
    const u = await makeUser(t, "erin");
    await t.inst.db.update(users).set({ locked: true }).where(eq(users.id, u.id));
    const { res } = await passwordAttempt(new Browser(t), "erin", "correct horse battery");
    expect(res.headers.get("location")).toMatch(/^\/ui\/login\/password/);
  });
});

describe("CSRF and binding to the browser", () => {
  it("refuses a missing or wrong token and a foreign Origin", async () => {
    const b = new Browser(t);
    const id = authRequestOf(await b.authorize(base()));
    for (const opts of [{ csrf: null }, { csrf: "forged" }, { origin: "https://evil.example" }]) {
      const res = await b.post("loginname", id, { loginName: "dave" }, opts);
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/ui/login/error?code=csrf");
    }
  });

  it("a request started in one browser cannot be continued in another", async () => {
    const a = new Browser(t);
    const id = authRequestOf(await a.authorize(base()));
    const other = new Browser(t);
    await other.authorize(base());
    const res = await other.post("loginname", id, { loginName: "dave" }, { csrf: await a.csrf(id) });
    expect(res.headers.get("location")).toBe("/ui/login/error?code=expired");
  });
});

describe("registration", () => {
  it("validates, creates the user, signs them in and audits it", async () => {
    const b = new Browser(t);
    const start = await b.authorize({ ...base(), prompt: "create" });
    expect(start.headers.get("location")).toMatch(/^\/ui\/login\/register\?/);
    const id = authRequestOf(start);
    const fields = { username: "frank", email: "frank@example.com", givenName: "Frank", familyName: "Z", password: "long enough pw", passwordConfirmation: "long enough pw" };
    const bad = await b.post("register", id, { ...fields, password: "short", passwordConfirmation: "short" });
    expect(bad.headers.get("location")).toMatch(/^\/ui\/login\/register\?/);
    const mismatch = await b.post("register", id, { ...fields, passwordConfirmation: "other" });
    expect(mismatch.headers.get("location")).toMatch(/^\/ui\/login\/register\?/);
    expect(await t.inst.db.select().from(users).where(eq(users.username, "frank"))).toHaveLength(0);
    const ok = await b.post("register", id, fields);
    expect(ok.headers.get("location")).toMatch(/^\/oauth\/v2\/authorize\/callback/);
    const done = await b.callback(ok.headers.get("location")!);
    expect(redirectParams(done).get("code")).toBeTruthy();
    const [frank] = await t.inst.db.select().from(users).where(eq(users.username, "frank"));
    expect(frank).toMatchObject({ email: "frank@example.com", givenName: "Frank", type: "human" });
    const events = await t.inst.db.select().from(auditEvents).where(and(eq(auditEvents.action, "user.registered"), eq(auditEvents.targetId, frank!.id)));
    expect(events).toHaveLength(1);
    // A taken username is refused (case-insensitively).
    const again = authRequestOf(await b.authorize({ ...base(), prompt: "create" }));
    const dup = await b.post("register", again, { ...fields, username: "FRANK" });
    expect(dup.headers.get("location")).toMatch(/^\/ui\/login\/register\?/);
  });
});

describe("sessions", () => {
  it("ending a session makes the next request ask for a login again", async () => {
    const b = new Browser(t);
    const done = await b.signIn(await b.authorize(base()), "dave", "correct horse battery");
    expect(redirectParams(done).get("code")).toBeTruthy();
    const ua = await findUserAgent(t.inst.db, b.cookies.get("torii_ua")!);
    const ended = await endSessions(t.inst.db, ua!.id);
    expect(ended).toHaveLength(1);
    expect(redirectParams(await b.authorize({ ...base(), prompt: "none" })).get("error")).toBe("login_required");
  });

  it("an idle session expires per the settings", async () => {
    await updateSettings(t.inst, { lifetimes: { ...(await import("@/lib/store/settings")).DEFAULT_LIFETIMES, sessionIdle: 1 } });
    try {
      const b = new Browser(t);
      await b.signIn(await b.authorize(base()), "dave", "correct horse battery");
      await new Promise((r) => setTimeout(r, 1500));
      expect(redirectParams(await b.authorize({ ...base(), prompt: "none" })).get("error")).toBe("login_required");
    } finally {
      await updateSettings(t.inst, { lifetimes: (await import("@/lib/store/settings")).DEFAULT_LIFETIMES });
    }
  });
});

describe("registration rules", () => {
  const policy = { minLength: 10, requireUppercase: false, requireLowercase: false, requireNumber: false, requireSymbol: false };
  const valid = { username: "grace", email: "grace@example.com", givenName: "Grace", familyName: "Hopper", password: "long enough pw", passwordConfirmation: "long enough pw" };
  const keys = async (patch: Partial<typeof valid>) => {
    const { validateRegistration } = await import("@/lib/login/register");
    return validateRegistration({ ...valid, ...patch }, policy).map((e) => `${e.field}:${e.key}`);
  };

  it("accepts the usernames the management API accepts, within 2 to 64 characters", async () => {
    expect(await keys({})).toEqual([]);
    expect(await keys({ username: "zoë.müller+x@y" })).toEqual([]);
    expect(await keys({ username: "a" })).toEqual(["username:usernameInvalid"]);
    expect(await keys({ username: "a".repeat(65) })).toEqual(["username:usernameInvalid"]);
    expect(await keys({ username: "has space" })).toEqual(["username:usernameInvalid"]);
    expect(await keys({ email: "not-an-email" })).toEqual(["email:emailInvalid"]);
  });

  it("refuses names that are too long and reports missing fields", async () => {
    expect(await keys({ givenName: "x".repeat(201) })).toEqual(["givenName:tooLong"]);
    expect(await keys({ familyName: "x".repeat(200) })).toEqual([]);
    expect(await keys({ username: "", email: "", givenName: "", familyName: "" })).toEqual([
      "username:usernameRequired",
      "email:emailRequired",
      "givenName:givenNameRequired",
      "familyName:familyNameRequired",
    ]);
  });
});
