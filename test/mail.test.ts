import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "@/lib/config";
import { handleSubmitReset } from "@/lib/login/handlers";
import { RESET_LIMITS } from "@/lib/login/password-reset";
import { findUserByLoginName, insertUser } from "@/lib/store/users";
import { startTestInstance, type TestInstance } from "./harness";
import { authRequestOf, Browser, makeClient, makeUser, redirectParams, REDIRECT } from "./authorize-support";
import { basic, CHALLENGE, token, VERIFIER } from "./token-support";
import { startSmtpSink } from "./smtp-sink";

// Mail (the outbox, SMTP delivery with retries, IDP_SMTP_URL) and password reset, seen from the
// management API, a real SMTP server in the test, and the login handlers.
let t: TestInstance;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
beforeAll(async () => {
  sink = await startSmtpSink();
  t = await startTestInstance();
});
afterAll(async () => {
  await t.close();
  await sink.close();
});

const json = (r: Response) => r.json();
const linkIn = (text: string) => /https?:\/\/\S+\/ui\/login\/reset\?token=[A-Za-z0-9_%-]+/.exec(text)?.[0];

async function configureSink() {
  const r = await t.api("/management/v1/settings/smtp", {
    method: "PUT",
    json: { host: "127.0.0.1", port: sink.port, security: "none", user: "torii", password: "s3cret-smtp", fromAddress: "noreply@torii.test", fromName: "Torii" },
  });
  expect(r.status).toBe(200);
  return json(r);
}


describe("without a mail server", () => {
  it("mails stay in the outbox as held, readable through the API", async () => {
    expect(await json(await t.api("/management/v1/settings/smtp"))).toMatchObject({ configured: false, source: null, hasPassword: false });
    const user = await makeUser(t, "held-user");
    const r = await t.api(`/management/v1/users/${user.id}/password-reset`, { method: "POST" });
    expect(r.status).toBe(200);
    const { mailId } = await json(r);
    const mail = await json(await t.api(`/management/v1/outbox/${mailId}`));
    expect(mail).toMatchObject({ to: user.email, template: "passwordReset", state: "held", userId: user.id, subject: "Reset your Torii password" });
    expect(linkIn(mail.text)).toContain(`${t.issuer}/ui/login/reset?token=`);
    expect(mail.html).toContain("Choose a new password");
    const list = await json(await t.api(`/management/v1/outbox?to=${encodeURIComponent(user.email!)}`));
    expect(list.mails.map((m: any) => m.mailId)).toEqual([mailId]);
    expect((await t.api("/management/v1/outbox/nope")).status).toBe(404);
    // A test mail needs a server.
    const test = await t.api("/management/v1/settings/smtp/test", { method: "POST", json: { to: "a@b.example" } });
    expect(test.status).toBe(409);
  });
});

describe("SMTP settings and delivery", () => {
  it("stores the server with its password encrypted and never returned; bad input is field errors", async () => {
    const bad = await t.api("/management/v1/settings/smtp", { method: "PUT", json: { host: "", port: 70000, security: "ssl", fromAddress: "nope" } });
    expect(bad.status).toBe(400);
    expect((await json(bad)).fields.map((f: any) => f.path).sort()).toEqual(["fromAddress", "host", "port", "security"]);
    const view = await configureSink();
    expect(view).toEqual({ configured: true, source: "settings", host: "127.0.0.1", port: sink.port, security: "none", user: "torii", hasPassword: true, fromAddress: "noreply@torii.test", fromName: "Torii" });
    expect(JSON.stringify(await json(await t.api("/management/v1/settings/smtp")))).not.toContain("s3cret");
    // Stored sealed: the settings row does not hold the password in clear.
    const raw = await t.inst.db.execute<{ smtp: unknown }>("SELECT smtp FROM instance_settings");
    expect(JSON.stringify(raw)).not.toContain("s3cret-smtp");
  });

  it("a test mail is sent at once with the stored credentials, and the answer says so", async () => {
    await configureSink();
    const r = await t.api("/management/v1/settings/smtp/test", { method: "POST", json: { to: "ops@torii.test" } });
    expect(r.status).toBe(200);
    expect(await json(r)).toMatchObject({ state: "sent", to: "ops@torii.test", template: "smtpTest", lastError: null });
    const got = await sink.waitFor((m) => m.to.includes("ops@torii.test"));
    expect(got.subject).toBe("Torii: test mail");
    expect(got.from).toBe("noreply@torii.test");
    expect(sink.logins.at(-1)).toEqual({ user: "torii", pass: "s3cret-smtp" });
  });

  it("a mail sent at once is claimed once: not sent again by a delivery pass or a second call at the same moment", async () => {
    const { enqueueMail } = await import("@/lib/store/mail-outbox");
    await configureSink();
    const before = sink.mails.length;
    const composed = await t.inst.mail.compose("smtpTest", { address: "once@torii.test", locale: "en" }, {});
    const row = await enqueueMail(t.inst.db, composed.mail, "queued", new Date());
    await Promise.all([t.inst.mail.deliverNow(row.id), t.inst.mail.deliverNow(row.id), t.inst.mail.deliverDue()]);
    // Whichever claimed it sent it; it was tried once.
    expect(await json(await t.api(`/management/v1/outbox/${row.id}`))).toMatchObject({ state: "sent", attempts: 1 });
    expect(sink.mails.slice(before).filter((m) => m.to.includes("once@torii.test"))).toHaveLength(1);
    // Sent: a later call sends nothing more.
    await t.inst.mail.deliverNow(row.id);
    expect(sink.mails.slice(before).filter((m) => m.to.includes("once@torii.test"))).toHaveLength(1);
  });
  // A server that is down or refuses, and the retry: test/mail-delivery.test.ts (on a fake clock).
});

describe("password reset", () => {
  it("forgot password → mail in the user's language → new password: the old sessions and tokens are gone, the link works once", async () => {
    await configureSink();
    const user = await makeUser(t, "reset-ann");
    await t.inst.db.execute(`UPDATE users SET locale = 'de' WHERE id = '${user.id}'` as never);
    const client = await makeClient(t);
    const secret = (await json(await t.api(`/management/v1/clients/${client.id}/secret`, { method: "POST" }))).clientSecret as string;

    // A session and a refresh token from before.
    const b = new Browser(t);
    const authorize = { client_id: client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid offline_access", state: "s", code_challenge: CHALLENGE, code_challenge_method: "S256" };
    const done = await b.signIn(await b.authorize(authorize), "reset-ann", "correct horse battery");
    const code = redirectParams(done).get("code")!;
    const tokens = (await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: VERIFIER }, { auth: basic(client.id, secret) })).body;
    expect(tokens.refresh_token).toBeTruthy();

    // Another browser forgets the password.
    const other = new Browser(t);
    const flow = authRequestOf(await other.authorize(authorize));
    const sent = await other.post("forgot", flow, { loginName: "reset-ann" });
    expect(sent.headers.get("location")).toBe(`/ui/login/forgot/sent?authRequest=${encodeURIComponent(flow)}`);
    const mail = await sink.waitFor((m) => m.to.includes(user.email!));
    expect(mail.subject).toBe("Ihr Passwort bei Torii zurücksetzen");
    const link = linkIn(mail.text)!;
    const resetToken = new URL(link).searchParams.get("token")!;

    const submit = (fields: Record<string, string>, origin = t.baseUrl) =>
      handleSubmitReset(
        t.inst,
        new Request(`${t.baseUrl}/ui/login/submit/reset`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", origin }, body: new URLSearchParams(fields).toString() }),
      );
    // Another site cannot post it; a weak or mismatched password keeps the link usable.
    expect((await submit({ token: resetToken, password: "New horse battery 1", confirm: "New horse battery 1" }, "https://evil.example")).headers.get("location")).toBe("/ui/login/error?code=csrf");
    expect((await submit({ token: resetToken, password: "short", confirm: "short" })).headers.get("location")).toMatch(/error=policy&violations=minLength/);
    expect((await submit({ token: resetToken, password: "New horse battery 1", confirm: "other" })).headers.get("location")).toMatch(/error=mismatch/);

    const ok = await submit({ token: resetToken, password: "New horse battery 1", confirm: "New horse battery 1" });
    expect(ok.headers.get("location")).toBe("/ui/login/reset/done");
    // Used once.
    expect((await submit({ token: resetToken, password: "Other horse battery 2", confirm: "Other horse battery 2" })).headers.get("location")).toMatch(/error=invalidLink/);
    expect((await submit({ token: "forged", password: "Other horse battery 2", confirm: "Other horse battery 2" })).headers.get("location")).toMatch(/error=invalidLink/);

    // The refresh token from before is revoked, the old password fails, the new one works.
    const refreshed = await token(t, { grant_type: "refresh_token", refresh_token: tokens.refresh_token }, { auth: basic(client.id, secret) });
    expect(refreshed.body.error).toBe("invalid_grant");
    const again = new Browser(t);
    await expect(again.signIn(await again.authorize(authorize), "reset-ann", "correct horse battery")).rejects.toThrow(/sign-in failed/);
    const fresh = new Browser(t);
    expect(redirectParams(await fresh.signIn(await fresh.authorize(authorize), "reset-ann", "New horse battery 1")).get("code")).toBeTruthy();
    // The first browser's session ended: prompt=none there is login_required.
    expect(redirectParams(await b.authorize({ ...authorize, prompt: "none" })).get("error")).toBe("login_required");

    const events = await json(await t.api(`/management/v1/audit?targetId=${user.id}`));
    expect(events.events.map((e: any) => e.action)).toEqual(expect.arrayContaining(["user.password_reset_requested", "user.password_reset"]));
  });

  it("an unknown name looks the same and sends nothing; an email address works too; requests are limited per account", async () => {
    await configureSink();
    const client = await makeClient(t);
    const b = new Browser(t);
    const flow = authRequestOf(await b.authorize({ client_id: client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid", code_challenge: CHALLENGE, code_challenge_method: "S256" }));
    const before = sink.mails.length;
    const unknown = await b.post("forgot", flow, { loginName: "nobody-here" });
    expect(unknown.headers.get("location")).toContain("/ui/login/forgot/sent");
    const user = await makeUser(t, "reset-bob");
    for (let i = 0; i < RESET_LIMITS.perAccount + 2; i++) {
      const r = await b.post("forgot", flow, { loginName: i % 2 ? user.email! : "reset-bob" });
      expect(r.headers.get("location")).toContain("/ui/login/forgot/sent");
    }
    // Every request was handled before its answer's test went on (Browser.post): the outbox holds
    // exactly the mails the limit let through, and they arrive.
    const outbox = (await json(await t.api(`/management/v1/outbox?to=${encodeURIComponent(user.email!)}`))).mails as unknown[];
    expect(outbox).toHaveLength(RESET_LIMITS.perAccount);
    await sink.waitFor((m) => m.to.includes(user.email!));
    expect(sink.mails.slice(before).some((m) => m.to.some((a) => a.includes("nobody")))).toBe(false);
    // An empty name stays on the form.
    expect((await b.post("forgot", flow, { loginName: " " })).headers.get("location")).toContain("/ui/login/forgot?");
  });
});

describe("no user enumeration by time: the lookup and the mail happen after the answer", () => {
  /** Holds every mail's composition until `open()`: what the request waited for shows as a hang. */
  function holdMail() {
    const mail = t.inst.mail;
    const compose = mail.compose.bind(mail);
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    mail.compose = async (...args: Parameters<typeof compose>) => {
      await gate;
      return compose(...args);
    };
    return {
      open: () => {
        open();
        mail.compose = compose;
      },
    };
  }
  const auditOf = async (action: string, targetId: string) => (await json(await t.api(`/management/v1/audit?action=${action}&targetId=${targetId}`))).events as unknown[];
  const post = async (b: Browser, handler: (inst: TestInstance["inst"], r: Request) => Promise<Response>, step: string, flow: string, fields: Record<string, string>) =>
    handler(
      t.inst,
      b.request(`/ui/login/submit/${step}`, {
        method: "POST",
        body: new URLSearchParams({ authRequest: flow, csrf: await b.csrf(flow), ...fields }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded", origin: t.baseUrl },
      }),
    );

  it("a reset request answers before any mail is made, the same for a known and an unknown name; the mail follows", async () => {
    const { handleSubmitForgot } = await import("@/lib/login/handlers");
    await configureSink();
    const user = await makeUser(t, "timing-tom");
    const client = await makeClient(t);
    const held = holdMail();
    try {
      const answers = [];
      for (const loginName of ["timing-tom", "timing-nobody"]) {
        const b = new Browser(t);
        const flow = authRequestOf(await b.authorize({ client_id: client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid", code_challenge: CHALLENGE, code_challenge_method: "S256" }));
        const r = await post(b, handleSubmitForgot, "forgot", flow, { loginName });
        answers.push({ status: r.status, location: r.headers.get("location")!.replace(encodeURIComponent(flow), "FLOW"), cookies: r.headers.getSetCookie().length });
      }
      // Both answered while the mail for the known account could not even be made (had the answer
      // waited for it, it would still be waiting).
      expect(answers[0]).toEqual(answers[1]);
      expect(answers[0]).toEqual({ status: 303, location: "/ui/login/forgot/sent?authRequest=FLOW", cookies: 0 });
      expect(await auditOf("user.password_reset_requested", user.id)).toHaveLength(0);
    } finally {
      held.open();
    }
    await t.inst.background.idle();
    expect(await auditOf("user.password_reset_requested", user.id)).toHaveLength(1);
    await sink.waitFor((m) => m.to.includes(user.email!));
  });

  it("a registration answers the same before its mail whether the name is new or taken; the new user's verification or the owner's notice follows", async () => {
    const { handleSubmitRegister } = await import("@/lib/login/handlers");
    await configureSink();
    const owner = await makeUser(t, "timing-owner");
    const client = await makeClient(t);
    const held = holdMail();
    const answers = [];
    try {
      for (const username of ["timing-owner", "timing-newbie"]) {
        const b = new Browser(t);
        const flow = authRequestOf(await b.authorize({ client_id: client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid", prompt: "create", code_challenge: CHALLENGE, code_challenge_method: "S256" }));
        const fields = { username, email: `${username}@elsewhere.example`, givenName: "T", familyName: "O", password: "correct horse battery", passwordConfirmation: "correct horse battery" };
        const r = await post(b, handleSubmitRegister, "register", flow, fields);
        answers.push({ status: r.status, location: r.headers.get("location")!.replace(encodeURIComponent(flow), "FLOW") });
      }
      expect(answers[0]).toEqual(answers[1]);
      // (Had either answer waited for its mail, it would still be waiting: no mail can be made yet.)
      expect(answers[0]).toEqual({ status: 303, location: "/ui/login/registered?authRequest=FLOW" });
    } finally {
      held.open();
    }
    await t.inst.background.idle();
    expect(await auditOf("user.registration.duplicate", owner.id)).toHaveLength(1);
    await sink.waitFor((m) => m.to.includes(owner.email!) && m.subject.startsWith("Someone tried"));
    const newbie = (await findUserByLoginName(t.inst.db, "timing-newbie"))!;
    expect(await auditOf("user.registered", newbie.id)).toHaveLength(1);
  });

  it("an address several accounts share: each account gets its own link, naming it", async () => {
    await configureSink();
    const shared = "family@shared.example";
    const a = await insertUser(t.inst.db, { type: "human", username: "shared-anna", email: shared, emailVerified: true }, "correct horse battery");
    const b2 = await insertUser(t.inst.db, { type: "human", username: "shared-ben", email: shared, emailVerified: true }, "correct horse battery");
    const client = await makeClient(t);
    const b = new Browser(t);
    const flow = authRequestOf(await b.authorize({ client_id: client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid", code_challenge: CHALLENGE, code_challenge_method: "S256" }));
    const before = sink.mails.length;
    expect((await b.post("forgot", flow, { loginName: shared.toUpperCase() })).headers.get("location")).toContain("/ui/login/forgot/sent");
    await sink.waitFor((m) => m.text.includes("shared-anna"));
    await sink.waitFor((m) => m.text.includes("shared-ben"));
    const mails = sink.mails.slice(before).filter((m) => m.to.includes(shared));
    expect(mails).toHaveLength(2);
    const links = mails.map((m) => linkIn(m.text));
    expect(new Set(links).size).toBe(2);
    // Each link resets its own account only.
    for (const [user, mail] of [[a, mails.find((m) => m.text.includes("shared-anna"))!], [b2, mails.find((m) => m.text.includes("shared-ben"))!]] as const) {
      const tokenOf = new URL(linkIn(mail.text)!).searchParams.get("token")!;
      const { resetLinkUser } = await import("@/lib/login/password-reset");
      expect((await resetLinkUser(t.inst, tokenOf))?.id).toBe(user.id);
    }
  });
});

describe("registration switch", () => {
  it("off: the register step creates nothing and goes back to the register page (which says so); the setting is in /settings", async () => {
    const put = await t.api("/management/v1/settings", { method: "PUT", json: { registration: { enabled: false } } });
    expect(put.status).toBe(200);
    expect((await json(put)).registration).toEqual({ enabled: false, names: "required" });
    const client = await makeClient(t);
    const b = new Browser(t);
    const flow = authRequestOf(await b.authorize({ client_id: client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid", prompt: "create", code_challenge: CHALLENGE, code_challenge_method: "S256" }));
    const r = await b.post("register", flow, { username: "closed-door", email: "closed@mail.example", givenName: "C", familyName: "D", password: "correct horse battery", passwordConfirmation: "correct horse battery" });
    expect(r.headers.get("location")).toBe(`/ui/login/register?authRequest=${encodeURIComponent(flow)}`);
    expect(await findUserByLoginName(t.inst.db, "closed-door")).toBeUndefined();
    await t.api("/management/v1/settings", { method: "PUT", json: { registration: { enabled: true } } });
  });
});

describe("registration fields", () => {
  it("names required, optional or not asked: the register step follows the setting", async () => {
    const client = await makeClient(t);
    const register = async (username: string, names: { givenName?: string; familyName?: string }) => {
      const b = new Browser(t);
      const flow = authRequestOf(await b.authorize({ client_id: client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid", prompt: "create", code_challenge: CHALLENGE, code_challenge_method: "S256" }));
      const r = await b.post("register", flow, { username, email: `${username}@mail.example`, password: "correct horse battery", passwordConfirmation: "correct horse battery", ...names });
      return r.headers.get("location")!;
    };
    expect(await register("names-req", {})).toContain("/ui/login/register?");
    expect(await findUserByLoginName(t.inst.db, "names-req")).toBeUndefined();

    const optional = await t.api("/management/v1/settings", { method: "PUT", json: { registration: { names: "optional" } } });
    expect((await json(optional)).registration).toEqual({ enabled: true, names: "optional" });
    expect(await register("names-opt", {})).toContain("/ui/login/registered");
    expect(await findUserByLoginName(t.inst.db, "names-opt")).toMatchObject({ givenName: null, familyName: null });

    await t.api("/management/v1/settings", { method: "PUT", json: { registration: { names: "hidden" } } });
    expect(await register("names-off", { givenName: "Ignored", familyName: "Too" })).toContain("/ui/login/registered");
    expect(await findUserByLoginName(t.inst.db, "names-off")).toMatchObject({ givenName: null, familyName: null });

    const bad = await t.api("/management/v1/settings", { method: "PUT", json: { registration: { names: "sometimes" } } });
    expect(bad.status).toBe(400);
    await t.api("/management/v1/settings", { method: "PUT", json: { registration: { names: "required" } } });
  });
});

describe("notices to an account's owner", () => {
  it("a registration with a taken name or address, and a lock after failed sign-ins, are told to the owner (and only a few times a day)", async () => {
    await configureSink();
    const owner = await makeUser(t, "notice-owner");
    const client = await makeClient(t);
    const flowOf = async (b: Browser, extra: Record<string, string> = {}) =>
      authRequestOf(await b.authorize({ client_id: client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid", code_challenge: CHALLENGE, code_challenge_method: "S256", ...extra }));
    const b = new Browser(t);
    const taken = await b.post("register", await flowOf(b, { prompt: "create" }), {
      username: "notice-owner",
      email: "someone.else@mail.example",
      givenName: "A",
      familyName: "B",
      password: "correct horse battery",
      passwordConfirmation: "correct horse battery",
    });
    expect(taken.headers.get("location")).toContain("/ui/login/registered");
    const notice = await sink.waitFor((m) => m.to.includes(owner.email!) && m.subject.startsWith("Someone tried"));
    expect(notice.text).toContain("No account was created");

    await t.api("/management/v1/settings", { method: "PUT", json: { lockoutPolicy: { freeFailures: 100, addressFreeFailures: 1000, lockAfterFailures: 3 } } });
    try {
      const attacker = new Browser(t);
      attacker.headers["x-torii-client-address"] = "10.9.9.9";
      const flow = await flowOf(attacker);
      await attacker.post("loginname", flow, { loginName: "notice-owner" });
      for (let i = 0; i < 3; i++) await attacker.post("password", flow, { password: `wrong ${i}` });
      const locked = await sink.waitFor((m) => m.to.includes(owner.email!) && m.subject === "Your Torii account was paused");
      expect(locked.text).toMatch(/paused for \d+ minutes/);
    } finally {
      await t.api("/management/v1/settings", { method: "PUT", json: { lockoutPolicy: { freeFailures: 5, addressFreeFailures: 100, lockAfterFailures: 50 } } });
      await t.api(`/management/v1/users/${owner.id}/lockout`, { method: "DELETE" });
    }
  });
});

describe("IDP_SMTP_URL", () => {
  it("is checked at start-up", () => {
    expect(() => parseConfig({ IDP_SMTP_URL: "http://mail.example" })).toThrow(/IDP_SMTP_URL/);
    expect(parseConfig({ IDP_SMTP_URL: "smtp://u:p@mail.example:2525", IDP_SMTP_FROM: "id@example.com" }).smtp).toEqual({ url: "smtp://u:p@mail.example:2525", from: "id@example.com" });
  });

  it("takes precedence over the console's settings and delivers", async () => {
    const env = await startTestInstance({ IDP_SMTP_URL: `smtp://envuser:envpass@127.0.0.1:${sink.port}`, IDP_SMTP_FROM: "env@torii.test" });
    try {
      expect(await json(await env.api("/management/v1/settings/smtp"))).toMatchObject({ configured: true, source: "environment" });
      const r = await env.api("/management/v1/settings/smtp/test", { method: "POST", json: { to: "env-test@torii.test" } });
      expect((await json(r)).state).toBe("sent");
      const got = await sink.waitFor((m) => m.to.includes("env-test@torii.test"));
      expect(got.from).toBe("env@torii.test");
      expect(sink.logins.at(-1)).toEqual({ user: "envuser", pass: "envpass" });
    } finally {
      await env.close();
    }
  });
});
