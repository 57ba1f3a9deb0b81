import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { handleSubmitVerifyLink } from "@/lib/login/handlers";
import { MAX_CODE_ATTEMPTS } from "@/lib/store/email-verifications";
import { findUserByLoginName, getUser } from "@/lib/store/users";
import { startTestInstance, type TestInstance } from "./harness";
import { authRequestOf, Browser, makeClient, makeUser, redirectParams, REDIRECT } from "./authorize-support";
import { basic, CHALLENGE, token, VERIFIER } from "./token-support";
import { startSmtpSink } from "./smtp-sink";

// Email verification: the code and link mailed at registration and on a change of address, the
// policy's `verifyEmail` step when verification is required, and the email_verified claim.
let t: TestInstance;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
beforeAll(async () => {
  sink = await startSmtpSink();
  t = await startTestInstance();
  await t.api("/management/v1/settings/smtp", { method: "PUT", json: { host: "127.0.0.1", port: sink.port, security: "none", fromAddress: "noreply@torii.test" } });
});
afterAll(async () => {
  await t.close();
  await sink.close();
});

const json = (r: Response) => r.json();
const codeIn = (text: string) => /(\d{6})/.exec(/: (\d{6})/.exec(text)?.[0] ?? "")?.[1];
const linkIn = (text: string) => /https?:\/\/\S+\/ui\/login\/verify\?token=[A-Za-z0-9_%-]+/.exec(text)?.[0];
const setPolicy = (emailVerification: string) => t.api("/management/v1/settings", { method: "PUT", json: { emailVerification } });
const submitLink = (tokenValue: string) =>
  handleSubmitVerifyLink(
    t.inst,
    new Request(`${t.baseUrl}/ui/login/submit/verify`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", origin: t.baseUrl }, body: new URLSearchParams({ token: tokenValue }).toString() }),
  );

describe("email verification", () => {
  it("is optional by default: registration mails a code and a link; the link verifies once; the claim tells the truth", async () => {
    expect((await json(await t.api("/management/v1/settings"))).emailVerification).toBe("optional");
    const client = await makeClient(t);
    const b = new Browser(t);
    const flow = authRequestOf(await b.authorize({ client_id: client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid email", prompt: "create", code_challenge: CHALLENGE, code_challenge_method: "S256" }));
    const r = await b.post("register", flow, { username: "vera", email: "vera@mail.example", givenName: "Vera", familyName: "V", password: "correct horse battery", passwordConfirmation: "correct horse battery" });
    expect(r.headers.get("location")).toContain("/ui/login/registered");
    const mail = await sink.waitFor((m) => m.to.includes("vera@mail.example"));
    expect(mail.subject).toBe("Confirm your email address for Torii");
    expect(codeIn(mail.text)).toMatch(/^\d{6}$/);
    const user = (await findUserByLoginName(t.inst.db, "vera"))!;
    expect(user.emailVerified).toBe(false);

    // Optional: the sign-in finishes at once, and the ID token says the address is unverified.
    const done = await b.signIn(await b.authorize({ client_id: client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid email", code_challenge: CHALLENGE, code_challenge_method: "S256" }), "vera", "correct horse battery");
    expect(redirectParams(done).get("code")).toBeTruthy();

    const tokenValue = new URL(linkIn(mail.text)!).searchParams.get("token")!;
    expect((await submitLink("forged")).headers.get("location")).toBe("/ui/login/verify?result=invalid");
    expect((await submitLink(tokenValue)).headers.get("location")).toBe("/ui/login/verify?result=verified");
    expect((await getUser(t.inst.db, user.id))!.emailVerified).toBe(true);
    expect((await submitLink(tokenValue)).headers.get("location")).toBe("/ui/login/verify?result=invalid");
  });

  it("required: an unverified user is asked for the code before the code is issued; wrong codes are counted; the new code works", async () => {
    expect((await setPolicy("required")).status).toBe(200);
    try {
      const client = await makeClient(t);
      const secret = (await json(await t.api(`/management/v1/clients/${client.id}/secret`, { method: "POST" }))).clientSecret as string;
      const user = await makeUser(t, "walt");
      await t.api(`/management/v1/users/${user.id}`, { method: "PATCH", json: { emailVerified: false } });
      const authorize = { client_id: client.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid email", state: "s", code_challenge: CHALLENGE, code_challenge_method: "S256" };
      const b = new Browser(t);
      const start = await b.authorize(authorize);
      const flow = authRequestOf(start);
      const atCallback = await b.signIn(start, "walt", "correct horse battery");
      expect(atCallback.headers.get("location")).toBe(`/ui/login/verify-email?authRequest=${encodeURIComponent(flow)}`);
      // prompt=none in the same browser: interaction_required, not a code.
      expect(redirectParams(await b.authorize({ ...authorize, prompt: "none" })).get("error")).toBe("interaction_required");

      // No mail yet (an administrator created the user): the user asks for one.
      expect((await b.post("verify-email", flow, { action: "resend" })).headers.get("location")).toContain("/ui/login/verify-email?");
      const first = codeIn((await sink.waitFor((m) => m.to.includes(user.email!))).text)!;
      const wrong = first === "000000" ? "111111" : "000000";
      for (let i = 0; i < MAX_CODE_ATTEMPTS; i++) {
        expect((await b.post("verify-email", flow, { action: "verify", code: wrong })).headers.get("location")).toContain("/ui/login/verify-email?");
      }
      // Five wrong codes retire that one: even the right code no longer works.
      expect((await b.post("verify-email", flow, { action: "verify", code: first })).headers.get("location")).toContain("/ui/login/verify-email?");

      const before = sink.mails.length;
      await b.post("verify-email", flow, { action: "resend" });
      const second = codeIn((await sink.waitFor((m) => m.to.includes(user.email!) && sink.mails.indexOf(m) >= before)).text)!;
      const ok = await b.post("verify-email", flow, { action: "verify", code: second.slice(0, 3) + " " + second.slice(3) });
      expect(ok.headers.get("location")).toBe(`/oauth/v2/authorize/callback?id=${encodeURIComponent(flow)}`);
      const code = redirectParams(await b.callback(ok.headers.get("location")!)).get("code")!;
      const tokens = (await token(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: VERIFIER }, { auth: basic(client.id, secret) })).body;
      expect(decodeJwt(tokens.id_token as string).sub).toBe(user.id);
      const info = await fetch(t.baseUrl + "/oidc/v1/userinfo", { headers: { authorization: `Bearer ${tokens.access_token as string}` } });
      expect(await info.json()).toMatchObject({ email: user.email, email_verified: true });
    } finally {
      await setPolicy("optional");
    }
  });

  it("a changed address is unverified and gets a mail; the API refuses a needless or switched-off verification", async () => {
    const user = await makeUser(t, "xena");
    const changed = await t.api(`/management/v1/users/${user.id}`, { method: "PATCH", json: { email: "xena.new@mail.example" } });
    expect((await json(changed)).emailVerified).toBe(false);
    await sink.waitFor((m) => m.to.includes("xena.new@mail.example"));
    // Marked verified by the administrator: no mail, and none can be asked for.
    const verified = await t.api(`/management/v1/users/${user.id}`, { method: "PATCH", json: { email: "xena.3@mail.example", emailVerified: true } });
    expect((await json(verified)).emailVerified).toBe(true);
    const needless = await t.api(`/management/v1/users/${user.id}/email-verification`, { method: "POST" });
    expect(needless.status).toBe(409);
    expect((await json(needless)).fields[0].code).toBe("email_already_verified");
    await t.api(`/management/v1/users/${user.id}`, { method: "PATCH", json: { emailVerified: false } });
    await setPolicy("off");
    try {
      const off = await t.api(`/management/v1/users/${user.id}/email-verification`, { method: "POST" });
      expect((await json(off)).fields[0].code).toBe("email_verification_off");
    } finally {
      await setPolicy("optional");
    }
    const sent = await t.api(`/management/v1/users/${user.id}/email-verification`, { method: "POST" });
    expect(sent.status).toBe(200);
    expect((await json(await t.api(`/management/v1/outbox/${(await json(sent)).mailId}`))).template).toBe("verifyEmail");
  });
});
