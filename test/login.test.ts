import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditEvents, users } from "@/db/schema";
import type { LockoutPolicy } from "@/db/schema";
import { checkPassword } from "@/lib/login/password";
import { findPendingAuthRequest } from "@/lib/store/auth-requests";
import { endSessions, liveSessions, findUserAgent } from "@/lib/store/sessions";
import { DEFAULT_LOCKOUT, getSettings, updateSettings } from "@/lib/store/settings";
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
  // prompt=login: a browser that has signed in before still reaches the password step.
  const id = authRequestOf(await b.authorize({ ...base(), prompt: "login" }));
  await b.post("loginname", id, { loginName });
  return { id, res: await b.post("password", id, { password }) };
}

async function formErrorOf(b: Browser, id: string) {
  const ua = await findUserAgent(t.inst.db, b.cookies.get("torii_ua")!);
  const pending = await findPendingAuthRequest(t.inst.db, id, ua!.id, new Date());
  return { error: pending!.formError, values: pending!.formValues };
}

async function withPolicy(patch: Partial<LockoutPolicy>, fn: () => Promise<void>) {
  await updateSettings(t.inst, { lockoutPolicy: { ...DEFAULT_LOCKOUT, ...patch } });
  try {
    await fn();
  } finally {
    await updateSettings(t.inst, { lockoutPolicy: DEFAULT_LOCKOUT });
  }
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

  it("throttles an attacker's address on one account with growing delays; the owner elsewhere still signs in", async () => {
    await makeUser(t, "heidi");
    const attacker = new Browser(t);
    attacker.headers["x-torii-client-address"] = "10.66.0.1";
    for (let i = 0; i < DEFAULT_LOCKOUT.freeFailures; i++) {
      const { id } = await passwordAttempt(attacker, "heidi", `wrong-${i}`);
      expect(await formErrorOf(attacker, id)).toEqual({ error: "invalid", values: null });
    }
    // Past the free failures the next try waits, even with the right password, and checks nothing.
    const { id } = await passwordAttempt(attacker, "heidi", "correct horse battery");
    const throttled = await formErrorOf(attacker, id);
    expect(throttled.error).toBe("throttled");
    expect(Number(throttled.values!.retrySeconds)).toBeGreaterThan(0);
    expect(await liveSessions(t.inst.db, (await findUserAgent(t.inst.db, attacker.cookies.get("torii_ua")!))!.id, new Date())).toHaveLength(0);
    // The owner from another address (no device cookie yet) is not locked out.
    const owner = new Browser(t);
    owner.headers["x-torii-client-address"] = "10.77.0.1";
    expect((await passwordAttempt(owner, "heidi", "correct horse battery")).res.headers.get("location")).toMatch(/callback/);
  });

  it("throttles an address spraying many names, but not a browser that signed in to its account before", async () => {
    await makeUser(t, "ivan");
    const address = "10.66.0.2";
    const ivan = new Browser(t);
    ivan.headers["x-torii-client-address"] = address;
    expect((await passwordAttempt(ivan, "ivan", "correct horse battery")).res.headers.get("location")).toMatch(/callback/);
    await withPolicy({ addressFreeFailures: 4 }, async () => {
      const sprayer = new Browser(t);
      sprayer.headers["x-torii-client-address"] = address;
      for (let i = 0; i < 4; i++) await passwordAttempt(sprayer, `spray-${i}`, "guess");
      const { id } = await passwordAttempt(sprayer, "dave", "correct horse battery");
      expect((await formErrorOf(sprayer, id)).error).toBe("throttled");
      // ivan's browser holds his device cookie: the shared address does not hold him back.
      expect((await passwordAttempt(ivan, "ivan", "correct horse battery")).res.headers.get("location")).toMatch(/callback/);
    });
  });

  it("locks an account after many failures from unknown browsers, but not for its owner's browser; an admin sees and lifts the lock", async () => {
    const judy = await makeUser(t, "judy");
    const owner = new Browser(t);
    owner.headers["x-torii-client-address"] = "10.88.0.1";
    const first = await passwordAttempt(owner, "judy", "correct horse battery");
    expect(first.res.headers.get("location")).toMatch(/callback/);
    const device = first.res.headers.getSetCookie().find((c) => c.startsWith("torii_device="));
    expect(device).toMatch(/HttpOnly/);
    expect(device).toMatch(/SameSite=Lax/);
    expect(device).not.toMatch(/Secure/); // the test issuer is plain http

    await withPolicy({ lockAfterFailures: 6, freeFailures: 3 }, async () => {
      // Two addresses, three free failures each: six in all from browsers judy never used.
      for (const address of ["10.99.0.1", "10.99.0.2"]) {
        const attacker = new Browser(t);
        attacker.headers["x-torii-client-address"] = address;
        for (let i = 0; i < 3; i++) await passwordAttempt(attacker, "judy", `guess-${i}`);
      }
      const lockEvents = await t.inst.db.select().from(auditEvents).where(and(eq(auditEvents.action, "user.lockout"), eq(auditEvents.targetId, judy.id)));
      expect(lockEvents).toHaveLength(1);

      // Now even the right password from an unknown browser is refused ...
      const stranger = new Browser(t);
      stranger.headers["x-torii-client-address"] = "10.99.0.3";
      const { id } = await passwordAttempt(stranger, "judy", "correct horse battery");
      expect((await formErrorOf(stranger, id)).error).toBe("accountLocked");
      // ... and a forged device cookie does not help,
      stranger.cookies.set("torii_device", `${judy.id}.forged`);
      const forged = await passwordAttempt(stranger, "judy", "correct horse battery");
      expect((await formErrorOf(stranger, forged.id)).error).toBe("accountLocked");
      // while judy's own browser signs in.
      expect((await passwordAttempt(owner, "judy", "correct horse battery")).res.headers.get("location")).toMatch(/callback/);

      // The administrator sees the lock and lifts it.
      const seen = await t.api(`/management/v1/users/${judy.id}/lockout`);
      expect(seen.status).toBe(200);
      const state = await seen.json();
      expect(state.locked).toBe(true);
      expect(new Date(state.lockedUntil).getTime()).toBeGreaterThan(Date.now());
      const lifted = await t.api(`/management/v1/users/${judy.id}/lockout`, { method: "DELETE" });
      expect(lifted.status).toBe(200);
      expect(await lifted.json()).toMatchObject({ locked: false, lockedUntil: null, recentFailures: 0 });
      expect(await t.inst.db.select().from(auditEvents).where(and(eq(auditEvents.action, "user.lockout.lifted"), eq(auditEvents.targetId, judy.id)))).toHaveLength(1);
      const after = new Browser(t);
      after.headers["x-torii-client-address"] = "10.99.0.4";
      expect((await passwordAttempt(after, "judy", "correct horse battery")).res.headers.get("location")).toMatch(/callback/);
      expect((await t.api(`/management/v1/users/nobody/lockout`)).status).toBe(404);
    });
  });

  it("locks unknown names exactly like known ones", async () => {
    await withPolicy({ lockAfterFailures: 2, freeFailures: 5 }, async () => {
      const b = new Browser(t);
      b.headers["x-torii-client-address"] = "10.55.0.1";
      for (const name of ["kate", "nobody-kate"]) {
        if (name === "kate") await makeUser(t, "kate");
        for (let i = 0; i < 2; i++) await passwordAttempt(b, name, "guess");
        const { id } = await passwordAttempt(b, name, "guess");
        expect(await formErrorOf(b, id), name).toMatchObject({ error: "accountLocked" });
      }
    });
  });

  it("counts a name with and without @<primaryDomain> as one name", async () => {
    await makeUser(t, "grace");
    const { primaryDomain } = await getSettings(t.inst);
    const b = new Browser(t);
    b.headers["x-torii-client-address"] = "10.9.8.1";
    // Three failures as "grace" and two as "grace@<domain>": five in all, the free failures.
    for (let i = 0; i < 5; i++) await passwordAttempt(b, i % 2 ? `grace@${primaryDomain.toUpperCase()}` : "grace", `wrong-${i}`);
    for (const loginName of ["grace", `grace@${primaryDomain}`, "nobody-x", `nobody-x@${primaryDomain}`]) {
      if (loginName === "nobody-x") for (let i = 0; i < 5; i++) await passwordAttempt(b, i % 2 ? `nobody-x@${primaryDomain}` : "nobody-x", "w");
      const { id } = await passwordAttempt(b, loginName, "correct horse battery");
      expect((await formErrorOf(b, id)).error, loginName).toBe("throttled");
    }
  });

  it("an administratively locked user gets no session", async () => {
    const u = await makeUser(t, "erin");
    await t.inst.db.update(users).set({ locked: true }).where(eq(users.id, u.id));
    const { res } = await passwordAttempt(new Browser(t), "erin", "correct horse battery");
    expect(res.headers.get("location")).toMatch(/^\/ui\/login\/password/);
  });
});

describe("sliding windows (injected time)", () => {
  const policy: LockoutPolicy = { windowSeconds: 600, freeFailures: 2, addressFreeFailures: 1000, maxDelaySeconds: 900, lockAfterFailures: 1000, lockSeconds: 3600 };
  const at = (t0: number, s: number) => new Date(t0 + s * 1000);
  const check = async (loginName: string, password: string, now: Date, address = "10.44.0.1", p = policy) => {
    const { primaryDomain } = await getSettings(t.inst);
    return checkPassword(t.inst.db, { loginName, password, address, policy: p, primaryDomain, now, memo: t.inst.memo });
  };

  it("after the free failures each try waits twice as long as the last, counted from the latest failure", async () => {
    await makeUser(t, "liam");
    const t0 = Date.UTC(2030, 0, 1, 10, 0, 7); // deliberately not on a window boundary
    expect((await check("liam", "x", at(t0, 0))).ok).toBe(false);
    expect(await check("liam", "x", at(t0, 1))).toEqual({ ok: false, reason: "invalid" });
    // Two failures: the third try waits 1 s after the latest (t=1), so at t=2 it runs.
    expect(await check("liam", "x", at(t0, 2))).toEqual({ ok: false, reason: "invalid" });
    // Three: 2 s after t=2.
    expect(await check("liam", "correct horse battery", at(t0, 3))).toEqual({ ok: false, reason: "throttled", retryAfterSeconds: 1 });
    expect(await check("liam", "x", at(t0, 4))).toEqual({ ok: false, reason: "invalid" });
    // Four: 4 s after t=4.
    expect(await check("liam", "correct horse battery", at(t0, 7))).toEqual({ ok: false, reason: "throttled", retryAfterSeconds: 1 });
    expect((await check("liam", "correct horse battery", at(t0, 8))).ok).toBe(true);
  });

  it("failures leave the count one window after they happened, whatever the clock says", async () => {
    await makeUser(t, "mia");
    const t0 = Date.UTC(2030, 0, 2, 10, 9, 59); // one second before a ten-minute boundary
    for (const s of [0, 1, 2, 3]) await check("mia", "x", at(t0, s * 8), "10.44.0.2");
    // Four failures in the window (free two): the fifth try waits 4 s after the latest (t=24).
    expect(await check("mia", "correct horse battery", at(t0, 26), "10.44.0.2")).toMatchObject({ reason: "throttled" });
    // The failure of t=0 lies before the clock's ten-minute boundary (t=1), the others after it;
    // all four count, and they keep counting ...
    expect(await check("mia", "correct horse battery", at(t0, 27), "10.44.0.2")).toMatchObject({ reason: "throttled" });
    // ... but at t=601 the failures of t=0 and earlier have left the window: three remain,
    // whose delay (2 s after t=24) has long passed.
    const late = await check("mia", "correct horse battery", at(t0, 601), "10.44.0.2");
    expect(late.ok).toBe(true);
  });

  it("an IPv6 client is counted by its /64: changing the lower half of the address starts no fresh count", async () => {
    await makeUser(t, "oskar");
    const t0 = Date.UTC(2030, 0, 4, 10, 0, 7);
    // Three failures, each from another address of one /64 (free two, then 1 s after the latest).
    expect(await check("oskar", "x", at(t0, 0), "2001:db8:77:1::a")).toEqual({ ok: false, reason: "invalid" });
    expect(await check("oskar", "x", at(t0, 1), "2001:db8:77:1:ffff::b")).toEqual({ ok: false, reason: "invalid" });
    expect(await check("oskar", "x", at(t0, 2), "2001:db8:77:1:1:2:3:4")).toEqual({ ok: false, reason: "invalid" });
    // A fourth address of the same /64 waits as the first would (2 s after t=2) ...
    expect(await check("oskar", "correct horse battery", at(t0, 3), "2001:db8:77:1::d")).toEqual({ ok: false, reason: "throttled", retryAfterSeconds: 1 });
    // ... while another /64 has a count of its own.
    expect((await check("oskar", "correct horse battery", at(t0, 3), "2001:db8:77:2::a")).ok).toBe(true);
  });

  it("the account lock counts failures of the last window only", async () => {
    const nina = await makeUser(t, "nina");
    const p = { ...policy, freeFailures: 1000, lockAfterFailures: 4 };
    const t0 = Date.UTC(2030, 0, 3, 12, 0, 0);
    for (const s of [0, 100, 200]) await check("nina", "x", at(t0, s), `10.45.0.${s / 100}`, p);
    // At t=650 the failure of t=0 has left the window: three in it with this one, no lock.
    expect(await check("nina", "x", at(t0, 650), "10.45.0.9", p)).toEqual({ ok: false, reason: "invalid" });
    // The fourth within the window locks.
    const locking = await check("nina", "x", at(t0, 660), "10.45.0.9", p);
    expect(locking).toEqual({ ok: false, reason: "invalid", lockedUser: { id: nina.id, until: at(t0, 660 + 3600) } });
    expect(await check("nina", "correct horse battery", at(t0, 661), "10.45.0.10", p)).toEqual({ ok: false, reason: "accountLocked", retryAfterSeconds: 3599 });
    // Trusted (the device cookie names nina): not locked out.
    const { primaryDomain } = await getSettings(t.inst);
    const trusted = await checkPassword(t.inst.db, { loginName: "nina", password: "correct horse battery", address: "10.45.0.10", policy: p, primaryDomain, trustedUserIds: [nina.id], now: at(t0, 662), memo: t.inst.memo });
    expect(trusted.ok).toBe(true);
    // The lock ends by itself and starts the count afresh.
    expect((await check("nina", "correct horse battery", at(t0, 660 + 3600), "10.45.0.10", p)).ok).toBe(true);
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
  const fields = (name: string) => ({
    username: name,
    email: `${name}@example.com`,
    givenName: "Frank",
    familyName: "Z",
    password: "long enough pw",
    passwordConfirmation: "long enough pw",
  });
  const register = async (b: Browser, f: Record<string, string>) => {
    const id = authRequestOf(await b.authorize({ ...base(), prompt: "create" }));
    return { id, res: await b.post("register", id, f) };
  };

  it("validates, creates the user, audits it and sends them on to sign in with the new password", async () => {
    const b = new Browser(t);
    b.headers["x-torii-client-address"] = "10.33.0.1";
    const start = await b.authorize({ ...base(), prompt: "create" });
    expect(start.headers.get("location")).toMatch(/^\/ui\/login\/register\?/);
    const id = authRequestOf(start);
    const f = fields("frank");
    const bad = await b.post("register", id, { ...f, password: "short", passwordConfirmation: "short" });
    expect(bad.headers.get("location")).toMatch(/^\/ui\/login\/register\?/);
    const mismatch = await b.post("register", id, { ...f, passwordConfirmation: "other" });
    expect(mismatch.headers.get("location")).toMatch(/^\/ui\/login\/register\?/);
    expect(await t.inst.db.select().from(users).where(eq(users.username, "frank"))).toHaveLength(0);
    const ok = await b.post("register", id, f);
    expect(ok.headers.get("location")).toBe(`/ui/login/registered?authRequest=${encodeURIComponent(id)}`);
    const [frank] = await t.inst.db.select().from(users).where(eq(users.username, "frank"));
    expect(frank).toMatchObject({ email: "frank@example.com", givenName: "Frank", type: "human" });
    const events = await t.inst.db.select().from(auditEvents).where(and(eq(auditEvents.action, "user.registered"), eq(auditEvents.targetId, frank!.id)));
    expect(events).toHaveLength(1);
    // Not signed in yet: the password step follows, with the new username.
    const ua = await findUserAgent(t.inst.db, b.cookies.get("torii_ua")!);
    expect(await liveSessions(t.inst.db, ua!.id, new Date())).toHaveLength(0);
    expect((await findPendingAuthRequest(t.inst.db, id, ua!.id, new Date()))!.loginName).toBe("frank");
    const signedIn = await b.post("password", id, { password: f.password });
    expect(signedIn.headers.get("location")).toMatch(/^\/oauth\/v2\/authorize\/callback/);
    expect(redirectParams(await b.callback(signedIn.headers.get("location")!)).get("code")).toBeTruthy();
  });

  it("a taken username or email continues exactly like a new one, creates nothing and is audited for the owner", async () => {
    const owner = await makeUser(t, "olga");
    const b = new Browser(t);
    b.headers["x-torii-client-address"] = "10.33.0.2";
    const fresh = await register(b, fields("olga-new"));
    const takenName = await register(b, { ...fields("OLGA"), email: "someone-else@example.com" });
    const takenEmail = await register(b, { ...fields("olga-2"), email: "OLGA@mail.example" });
    for (const r of [fresh, takenName, takenEmail]) {
      expect(r.res.status).toBe(303);
      expect(r.res.headers.get("location")).toBe(`/ui/login/registered?authRequest=${encodeURIComponent(r.id)}`);
      expect(r.res.headers.getSetCookie()).toEqual([]);
    }
    const olgas = await t.inst.db.select().from(users).where(sql`lower(${users.username}) LIKE 'olga%' OR lower(${users.email}) = 'olga@mail.example'`);
    expect(olgas.map((u) => u.username).sort()).toEqual(["olga", "olga-new"]);
    const dups = await t.inst.db.select().from(auditEvents).where(eq(auditEvents.action, "user.registration.duplicate"));
    // One event per attempt; they are recorded by background tasks, in either order.
    expect(dups.filter((e) => e.targetId === owner.id).map((e) => (e.details as { matched: string[] }).matched.join(",")).sort()).toEqual(["email", "username"]);
    // The password chosen by whoever registered the taken name does not open the owner's account.
    const attempt = await b.post("password", takenName.id, { password: "long enough pw" });
    expect(attempt.headers.get("location")).toMatch(/^\/ui\/login\/password/);
  });

  it("is rate-limited per address", async () => {
    const before = (await getSettings(t.inst)).rateLimits;
    await updateSettings(t.inst, { rateLimits: { ...before, registrationPerHour: 2 } });
    try {
      const b = new Browser(t);
      b.headers["x-torii-client-address"] = "10.33.0.3";
      for (const name of ["paul-1", "paul-2"]) expect((await register(b, fields(name))).res.headers.get("location")).toMatch(/^\/ui\/login\/registered/);
      const third = await register(b, fields("paul-3"));
      expect(third.res.headers.get("location")).toMatch(/^\/ui\/login\/register\?/);
      const ua = await findUserAgent(t.inst.db, b.cookies.get("torii_ua")!);
      expect((await findPendingAuthRequest(t.inst.db, third.id, ua!.id, new Date()))!.formError).toBe("registerThrottled");
      expect(await t.inst.db.select().from(users).where(eq(users.username, "paul-3"))).toHaveLength(0);
      const elsewhere = new Browser(t);
      elsewhere.headers["x-torii-client-address"] = "10.33.0.4";
      expect((await register(elsewhere, fields("paul-3"))).res.headers.get("location")).toMatch(/^\/ui\/login\/registered/);
    } finally {
      await updateSettings(t.inst, { rateLimits: before });
    }
  });

  it("counts an IPv6 client by its /64", async () => {
    const before = (await getSettings(t.inst)).rateLimits;
    await updateSettings(t.inst, { rateLimits: { ...before, registrationPerHour: 2 } });
    try {
      const from = (address: string) => {
        const b = new Browser(t);
        b.headers["x-torii-client-address"] = address;
        return b;
      };
      for (const [name, address] of [
        ["quinn-1", "2001:db8:33:1::1"],
        ["quinn-2", "2001:db8:33:1::2"],
      ] as const) {
        expect((await register(from(address), fields(name))).res.headers.get("location")).toMatch(/^\/ui\/login\/registered/);
      }
      // A third address of the same /64 is refused; one of another /64 is not.
      expect((await register(from("2001:db8:33:1:abcd::3"), fields("quinn-3"))).res.headers.get("location")).toMatch(/^\/ui\/login\/register\?/);
      expect((await register(from("2001:db8:33:2::1"), fields("quinn-4"))).res.headers.get("location")).toMatch(/^\/ui\/login\/registered/);
    } finally {
      await updateSettings(t.inst, { rateLimits: before });
    }
  });
});

describe("sessions", () => {
  it("a sign-in renews the browser's cookie: a value read or planted before it does not carry the session", async () => {
    const victim = new Browser(t);
    const started = await victim.authorize(base());
    const before = victim.cookies.get("torii_ua")!;
    expect(before).toBeTruthy();
    // Someone who had this browser before (a shared computer) kept its cookie's value.
    const other = new Browser(t);
    other.cookies.set("torii_ua", before);

    const done = await victim.signIn(started, "dave", "correct horse battery");
    expect(redirectParams(done).get("code")).toBeTruthy();
    const after = victim.cookies.get("torii_ua")!;
    expect(after).toBeTruthy();
    expect(after).not.toBe(before);
    // The browser that signed in goes on with its session ...
    expect(redirectParams(await victim.authorize({ ...base(), prompt: "none" })).get("code")).toBeTruthy();
    // ... while the old value names no browser and no session.
    expect(await findUserAgent(t.inst.db, before)).toBeUndefined();
    expect(redirectParams(await other.authorize({ ...base(), prompt: "none" })).get("error")).toBe("login_required");
  });

  it("ending a session makes the next request ask for a login again", async () => {
    const b = new Browser(t);
    const done = await b.signIn(await b.authorize(base()), "dave", "correct horse battery");
    expect(redirectParams(done).get("code")).toBeTruthy();
    const ua = await findUserAgent(t.inst.db, b.cookies.get("torii_ua")!);
    const ended = await endSessions(t.inst.db, ua!.id, undefined, new Date());
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

  it("accepts the usernames the management API accepts, within 2 to 64 characters, without @ and in one script", async () => {
    expect(await keys({})).toEqual([]);
    for (const username of ["zoë.müller+x", "grace_hopper-1", "алиса", "山田たろう", "김철수", "ΑΘΗΝΑ"]) expect(await keys({ username }), username).toEqual([]);
    expect(await keys({ username: "a" })).toEqual(["username:usernameInvalid"]);
    expect(await keys({ username: "a".repeat(65) })).toEqual(["username:usernameInvalid"]);
    expect(await keys({ username: "has space" })).toEqual(["username:usernameInvalid"]);
    // Found by a probe: someone else's login name or email address as a new username, and look-alikes.
    for (const username of ["victim@localhost", "victim@example.com", "x@y", "ａｌｉｃｅ", "\u0430lice", "pay\u0440al"]) {
      expect(await keys({ username }), username).toEqual(["username:usernameInvalid"]);
    }
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
