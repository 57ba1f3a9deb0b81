import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertUser } from "@/lib/store/users";
import { startTestInstance, type TestInstance } from "./harness";
import { authRequestOf, Browser, makeClient, REDIRECT } from "./authorize-support";
import { CHALLENGE } from "./token-support";
import { FakeClock } from "./fakes/fake-clock";

// Issue 13, "Bad input and attacks": an expired, reused or forged reset or verification link
// leads to the link's page with a clear "no longer works" answer and changes nothing: the
// password still signs in, no session cookie is set, no audit event of a change is written.
// Posted over HTTP to the route handlers Next serves; what the pages then show is in
// e2e/account-mail.spec.ts. Time moves on a fake clock.
let t: TestInstance;
const clock = new FakeClock(Date.now());
let clientId: string;
beforeAll(async () => {
  t = await startTestInstance({}, { nextRoutes: true, clock });
  clientId = (await makeClient(t)).id;
});
afterAll(async () => {
  await t.close();
});

const PASSWORD = "correct horse battery";
const json = (r: Response) => r.json();

async function user(username: string, emailVerified = true) {
  return insertUser(t.inst.db, { type: "human", username, email: `${username}@mail.example`, givenName: "Ann", familyName: "B", emailVerified }, PASSWORD);
}

/** The text of the newest outbox mail to `address` (no mail server: mails are held there). */
async function lastMailText(address: string): Promise<string> {
  const list = (await json(await t.api(`/management/v1/outbox?to=${encodeURIComponent(address)}`))).mails as { mailId: string }[];
  return (await json(await t.api(`/management/v1/outbox/${list[0]!.mailId}`))).text;
}

const tokenIn = (text: string, path: string) => new URL(new RegExp(`https?://\\S+${path}\\?token=[A-Za-z0-9_%-]+`).exec(text)![0]).searchParams.get("token")!;

async function resetToken(userId: string, email: string): Promise<string> {
  expect((await t.api(`/management/v1/users/${userId}/password-reset`, { method: "POST" })).status).toBe(200);
  return tokenIn(await lastMailText(email), "/ui/login/reset");
}

function postForm(path: string, fields: Record<string, string>) {
  return fetch(t.baseUrl + path, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: t.baseUrl },
    body: new URLSearchParams(fields).toString(),
  });
}

const submitReset = (token: string, password: string) => postForm("/ui/login/submit/reset", { token, password, confirm: password });
const submitVerify = (token: string) => postForm("/ui/login/submit/verify", { token });

/** Whether `password` signs `username` in (a fresh browser through the login steps). */
async function signsIn(username: string, password: string): Promise<boolean> {
  const b = new Browser(t);
  const start = await b.authorize({ client_id: clientId, redirect_uri: REDIRECT, response_type: "code", scope: "openid", code_challenge: CHALLENGE, code_challenge_method: "S256" });
  return b.signIn(start, username, password).then(
    () => true,
    () => false,
  );
}

const auditActions = async (userId: string) => ((await json(await t.api(`/management/v1/audit?targetId=${userId}`))).events as { action: string }[]).map((e) => e.action);

/** What a refused reset answers: back to the link's page with the reason, no cookie. */
function expectRefusedReset(r: Response, token: string) {
  expect(r.status).toBe(303);
  expect(r.headers.get("location")).toBe(`/ui/login/reset?token=${encodeURIComponent(token)}&error=invalidLink`);
  expect(r.headers.getSetCookie()).toEqual([]);
}

describe("password reset links that no longer work", () => {
  it("expired (after the configured hour): refused, the password unchanged, no reset recorded", async () => {
    const u = await user("expired-reset");
    const token = await resetToken(u.id, u.email!);
    clock.advanceSeconds(3600 + 1);
    expectRefusedReset(await submitReset(token, "Brand new horse 1"), token);
    expect(await signsIn(u.username, PASSWORD)).toBe(true);
    expect(await signsIn(u.username, "Brand new horse 1")).toBe(false);
    expect(await auditActions(u.id)).not.toContain("user.password_reset");
  });

  it("just before it expires it still works (the refusal above is the expiry, not something else)", async () => {
    const u = await user("fresh-reset");
    const token = await resetToken(u.id, u.email!);
    clock.advanceSeconds(3600 - 5);
    const r = await submitReset(token, "Brand new horse 1");
    expect(r.headers.get("location")).toBe("/ui/login/reset/done");
    expect(await signsIn(u.username, "Brand new horse 1")).toBe(true);
  });

  it("reused: the second use is refused and the first use's password stays", async () => {
    const u = await user("reused-reset");
    const token = await resetToken(u.id, u.email!);
    expect((await submitReset(token, "First new horse 1")).headers.get("location")).toBe("/ui/login/reset/done");
    expectRefusedReset(await submitReset(token, "Second new horse 2"), token);
    expect(await signsIn(u.username, "First new horse 1")).toBe(true);
    expect(await signsIn(u.username, "Second new horse 2")).toBe(false);
    expect((await auditActions(u.id)).filter((a) => a === "user.password_reset")).toHaveLength(1);
  });

  it("forged (made up, or a real one altered): refused, nothing changed", async () => {
    const u = await user("forged-reset");
    const real = await resetToken(u.id, u.email!);
    const altered = real.slice(0, -1) + (real.endsWith("A") ? "B" : "A");
    for (const token of ["forged", altered, "", "x".repeat(2000)]) {
      const r = await submitReset(token, "Forged new horse 1");
      expect(r.status).toBe(303);
      expect(r.headers.get("location")).toMatch(/^\/ui\/login\/reset\?token=[^&]*&error=invalidLink$/);
    }
    expect(await signsIn(u.username, PASSWORD)).toBe(true);
    expect(await auditActions(u.id)).not.toContain("user.password_reset");
    // The real link was not spent by the attempts.
    expect((await submitReset(real, "Real new horse 1")).headers.get("location")).toBe("/ui/login/reset/done");
  });
});

describe("email verification links that no longer work", () => {
  async function verificationToken(username: string) {
    const u = await user(username, false);
    expect((await t.api(`/management/v1/users/${u.id}/email-verification`, { method: "POST" })).status).toBe(200);
    return { u, token: tokenIn(await lastMailText(u.email!), "/ui/login/verify") };
  }
  const verified = async (userId: string) => (await json(await t.api(`/management/v1/users/${userId}`))).emailVerified as boolean;
  function expectRefused(r: Response) {
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/ui/login/verify?result=invalid");
    expect(r.headers.getSetCookie()).toEqual([]);
  }

  it("expired (after a day): refused, the address stays unverified", async () => {
    const { u, token } = await verificationToken("expired-verify");
    clock.advanceSeconds(86_400 + 1);
    expectRefused(await submitVerify(token));
    expect(await verified(u.id)).toBe(false);
    expect(await auditActions(u.id)).not.toContain("user.email_verified");
  });

  it("reused: the first use verifies, the second is refused (and records nothing more)", async () => {
    const { u, token } = await verificationToken("reused-verify");
    expect((await submitVerify(token)).headers.get("location")).toBe("/ui/login/verify?result=verified");
    expect(await verified(u.id)).toBe(true);
    expectRefused(await submitVerify(token));
    expect((await auditActions(u.id)).filter((a) => a === "user.email_verified")).toHaveLength(1);
  });

  it("forged: refused, the address stays unverified, the real link still works", async () => {
    const { u, token } = await verificationToken("forged-verify");
    for (const forged of ["forged", token.slice(0, -1) + (token.endsWith("A") ? "B" : "A"), ""]) expectRefused(await submitVerify(forged));
    expect(await verified(u.id)).toBe(false);
    expect(await auditActions(u.id)).not.toContain("user.email_verified");
    expect((await submitVerify(token)).headers.get("location")).toBe("/ui/login/verify?result=verified");
  });
});

describe("email verification codes that no longer work", () => {
  const codeIn = (text: string) => /: (\d{6})/.exec(text)![1]!;
  const verified = async (userId: string) => (await json(await t.api(`/management/v1/users/${userId}`))).emailVerified as boolean;

  /** A sign-in that stops at the code page (verification required), in a fresh browser. */
  async function atCodePage(username: string) {
    const b = new Browser(t);
    const start = await b.authorize({ client_id: clientId, redirect_uri: REDIRECT, response_type: "code", scope: "openid email", code_challenge: CHALLENGE, code_challenge_method: "S256" });
    const flow = authRequestOf(start);
    expect((await b.signIn(start, username, PASSWORD)).headers.get("location")).toBe(`/ui/login/verify-email?authRequest=${encodeURIComponent(flow)}`);
    const enter = async (code: string) => (await b.post("verify-email", flow, { action: "verify", code })).headers.get("location");
    return { b, flow, enter, refused: `/ui/login/verify-email?authRequest=${encodeURIComponent(flow)}`, done: `/oauth/v2/authorize/callback?id=${encodeURIComponent(flow)}` };
  }

  it("expired (yesterday's), made up, or an earlier address's: refused at the code page, the address stays unverified", async () => {
    expect((await t.api("/management/v1/settings", { method: "PUT", json: { emailVerification: "required" } })).status).toBe(200);
    try {
      const u = await user("code-user", false);
      expect((await t.api(`/management/v1/users/${u.id}/email-verification`, { method: "POST" })).status).toBe(200);
      const old = codeIn(await lastMailText(u.email!));
      clock.advanceSeconds(86_400 + 1);

      const day2 = await atCodePage(u.username);
      expect(await day2.enter(old)).toBe(day2.refused);
      expect(await day2.enter(old === "123456" ? "654321" : "123456")).toBe(day2.refused);
      expect(await verified(u.id)).toBe(false);
      expect(await auditActions(u.id)).not.toContain("user.email_verified");
      // A new code from the same page works.
      expect(await day2.b.post("verify-email", day2.flow, { action: "resend" }).then((r) => r.headers.get("location"))).toBe(day2.refused);
      const fresh = codeIn(await lastMailText(u.email!));
      expect(await day2.enter(fresh)).toBe(day2.done);
      expect(await verified(u.id)).toBe(true);

      // The address changes: the code that confirmed the old one does not confirm the new one.
      const changed = `${u.username}.new@mail.example`;
      expect((await t.api(`/management/v1/users/${u.id}`, { method: "PATCH", json: { email: changed } })).status).toBe(200);
      expect(await verified(u.id)).toBe(false);
      const again = await atCodePage(u.username);
      expect(await again.enter(fresh)).toBe(again.refused);
      expect(await verified(u.id)).toBe(false);
      expect(await again.enter(codeIn(await lastMailText(changed)))).toBe(again.done);
      expect((await auditActions(u.id)).filter((a) => a === "user.email_verified")).toHaveLength(2);
    } finally {
      await t.api("/management/v1/settings", { method: "PUT", json: { emailVerification: "optional" } });
    }
  });
});
