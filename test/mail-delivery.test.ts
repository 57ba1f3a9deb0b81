import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertUser } from "@/lib/store/users";
import { startTestInstance, type TestInstance } from "./harness";
import { FakeClock } from "./fakes/fake-clock";
import { startSmtpSink } from "./smtp-sink";

// Mail delivery as an operator sees it: retries after the mail server refused a mail, the
// administrator's mail texts in what the server receives, and "send test mail" pressed twice.
// The engine runs on a fake clock: a retry is made due by moving time, never by sleeping.
let t: TestInstance;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
const clock = new FakeClock(Date.now());
beforeAll(async () => {
  sink = await startSmtpSink();
  t = await startTestInstance({}, { clock });
  const r = await t.api("/management/v1/settings/smtp", {
    method: "PUT",
    json: { host: "127.0.0.1", port: sink.port, security: "none", fromAddress: "noreply@torii.test", fromName: "Torii" },
  });
  expect(r.status).toBe(200);
});
afterAll(async () => {
  await t.close();
  await sink.close();
});

const json = (r: Response) => r.json();
const outboxMail = async (mailId: string) => json(await t.api(`/management/v1/outbox/${mailId}`));
const receivedBy = (address: string) => sink.mails.filter((m) => m.to.includes(address));

async function user(username: string, locale: string | null) {
  return insertUser(t.inst.db, { type: "human", username, email: `${username}@mail.example`, givenName: "Ada", familyName: "L", emailVerified: true, locale }, "correct horse battery");
}

async function resetMail(userId: string): Promise<string> {
  const r = await t.api(`/management/v1/users/${userId}/password-reset`, { method: "POST" });
  expect(r.status).toBe(200);
  return (await json(r)).mailId;
}

describe("delivery retries", () => {
  it("a mail the server refuses is failed with the server's answer in the outbox, and a later pass sends it once", async () => {
    const u = await user("retry-user", "en");
    sink.refuseNext(1, "Mailbox busy, try again later");
    const mailId = await resetMail(u.id);
    // The request did not wait for the server; the background delivery records the refusal.
    await expect.poll(async () => (await outboxMail(mailId)).state, { timeout: 10_000 }).toBe("failed");
    const failed = await outboxMail(mailId);
    expect(failed).toMatchObject({ attempts: 1, sentAt: null });
    expect(failed.lastError).toContain("Mailbox busy, try again later");
    expect(new Date(failed.nextAttemptAt).getTime()).toBe(clock.now() + 30_000);
    const listed = (await json(await t.api(`/management/v1/outbox?to=${encodeURIComponent(u.email!)}`))).mails;
    expect(listed).toEqual([expect.objectContaining({ mailId, state: "failed", lastError: failed.lastError })]);
    expect(receivedBy(u.email!)).toHaveLength(0);

    // Not due yet: a pass now leaves it.
    await t.inst.mail.deliverDue();
    expect(await outboxMail(mailId)).toMatchObject({ state: "failed", attempts: 1 });
    expect(receivedBy(u.email!)).toHaveLength(0);

    clock.advanceSeconds(30);
    await t.inst.mail.deliverDue();
    expect(await outboxMail(mailId)).toMatchObject({ state: "sent", attempts: 2, nextAttemptAt: null });
    expect(receivedBy(u.email!)).toHaveLength(1);
    expect(receivedBy(u.email!)[0]!.subject).toBe("Reset your Torii password");

    // Sent is final: later passes send nothing more.
    clock.advanceSeconds(3600);
    await t.inst.mail.deliverDue();
    expect(receivedBy(u.email!)).toHaveLength(1);
  });

  it("a mail server that is down: the test mail answers failed with the connection error; the mail is retried later", async () => {
    clock.advanceSeconds(60); // past the test mail's cooldown
    const down = await t.api("/management/v1/settings/smtp", { method: "PUT", json: { host: "127.0.0.1", port: 1, security: "none", fromAddress: "noreply@torii.test" } });
    expect(down.status).toBe(200);
    const r = await t.api("/management/v1/settings/smtp/test", { method: "POST", json: { to: "down@torii.test" } });
    expect(r.status).toBe(200);
    const mail = await json(r);
    expect(mail.state).toBe("failed");
    expect(mail.lastError).toMatch(/ECONNREFUSED|connect/i);
    expect(new Date(mail.nextAttemptAt).getTime()).toBe(clock.now() + 30_000);

    // The server is back: the next due pass delivers it.
    expect((await t.api("/management/v1/settings/smtp", { method: "PUT", json: { host: "127.0.0.1", port: sink.port, security: "none", fromAddress: "noreply@torii.test" } })).status).toBe(200);
    clock.advanceSeconds(30);
    await t.inst.mail.deliverDue();
    expect(await outboxMail(mail.mailId)).toMatchObject({ state: "sent", attempts: 2 });
    expect(receivedBy("down@torii.test")).toHaveLength(1);
  });
});

describe("mail texts set by an administrator", () => {
  it("an override of the `mail` texts of a locale is in the subject and body the server receives, for recipients of that locale only", async () => {
    const put = await t.api("/management/v1/texts/de", {
      method: "PUT",
      json: {
        texts: {
          "mail.passwordReset.subject": "ACME-Konto: neues Passwort für {product}",
          "mail.passwordReset.body": "Das ACME-Team hat eine Anfrage für {loginName} erhalten; der Link gilt {minutes} Minuten.",
        },
      },
    });
    expect(put.status).toBe(200);
    // An override may use only the placeholders of its default.
    const bad = await t.api("/management/v1/texts/de", { method: "PUT", json: { texts: { "mail.passwordReset.subject": "Hallo {secret}" } } });
    expect(bad.status).toBe(400);

    const de = await user("texte-de", "de");
    const en = await user("texts-en", "en");
    await resetMail(de.id);
    await resetMail(en.id);
    const deMail = await sink.waitFor((m) => m.to.includes(de.email!));
    expect(deMail.subject).toBe("ACME-Konto: neues Passwort für Torii");
    expect(deMail.text).toMatch(/Das ACME-Team hat eine Anfrage für texte-de@\S+ erhalten; der Link gilt 60 Minuten\./);
    // The texts not overridden stay the German defaults.
    expect(deMail.text).toContain("Hallo Ada");
    expect(deMail.raw).toContain("ACME-Team");
    const enMail = await sink.waitFor((m) => m.to.includes(en.email!));
    expect(enMail.subject).toBe("Reset your Torii password");
    expect(enMail.text).not.toContain("ACME");
  });
});

describe("send test mail", () => {
  it("pressed twice at once sends one mail; the other call is 429 with Retry-After until the cooldown has passed", async () => {
    clock.advanceSeconds(60);
    const to = "twice@torii.test";
    const send = () => t.api("/management/v1/settings/smtp/test", { method: "POST", json: { to } });
    const answers = await Promise.all([send(), send()]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 429]);
    const refused = answers.find((r) => r.status === 429)!;
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(10);
    expect(await json(refused)).toMatchObject({ error: "too_many_requests", fields: [{ path: "", code: "smtp_test_too_soon", params: { seconds: retryAfter } }] });
    expect(await json(answers.find((r) => r.status === 200)!)).toMatchObject({ state: "sent", to });
    // One mail received, one in the outbox.
    expect(receivedBy(to)).toHaveLength(1);
    expect((await json(await t.api(`/management/v1/outbox?to=${to}`))).mails).toHaveLength(1);

    // Still within the cooldown: refused, nothing sent.
    clock.advanceSeconds(5);
    const again = await send();
    expect(again.status).toBe(429);
    expect(Number(again.headers.get("retry-after"))).toBe(5);
    expect(receivedBy(to)).toHaveLength(1);

    clock.advanceSeconds(5);
    expect((await send()).status).toBe(200);
    expect(receivedBy(to)).toHaveLength(2);
  });

  it("the OpenAPI document names the 429", async () => {
    const doc = await json(await t.api("/management/v1/openapi.json"));
    expect(Object.keys(doc.paths["/settings/smtp/test"].post.responses)).toContain("429");
  });
});
