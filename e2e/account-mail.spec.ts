import { expect, test } from "@playwright/test";
import { startSmtpSink } from "../test/smtp-sink";
import { createUser, RelyingParty } from "./rp";
import { callbackParams, PASSWORD, signIn, uniqueName } from "./login-helpers";
import { adminApi, SHOTS } from "./support";

/**
 * Mail in the browser: registration with email verification required (the code from the mail,
 * then the sign-in finishes; the mail's link confirms too), and password reset in every language: "Forgot password?" → the mail, read from a
 * real SMTP server in this process → a new password → the old sessions are gone and the link
 * works once. And self-registration switched off.
 */

let rp: RelyingParty;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;

test.beforeAll(async () => {
  sink = await startSmtpSink();
  rp = await RelyingParty.start();
  const r = await adminApi("/settings/smtp", { method: "PUT", json: { host: "127.0.0.1", port: sink.port, security: "none", fromAddress: "noreply@torii.test" } });
  expect(r.status).toBe(200);
});
test.afterAll(async () => {
  await adminApi("/settings/smtp", { method: "DELETE" });
  await rp.stop();
  await sink.close();
});

const TEXTS = {
  en: { forgot: "Forgot password?", send: "Send link", sent: "Check your mail", subject: "Reset your Torii password", title: "Choose a new password", submit: "Set password", done: "Password changed", invalid: "This link no longer works" },
  de: { forgot: "Passwort vergessen?", send: "Link senden", sent: "Sehen Sie in Ihr Postfach", subject: "Ihr Passwort bei Torii zurücksetzen", title: "Neues Passwort wählen", submit: "Passwort festlegen", done: "Passwort geändert", invalid: "Dieser Link gilt nicht mehr" },
  fr: { forgot: "Mot de passe oublié ?", send: "Envoyer le lien", sent: "Consultez votre messagerie", subject: "Réinitialiser votre mot de passe Torii", title: "Choisir un nouveau mot de passe", submit: "Définir le mot de passe", done: "Mot de passe modifié", invalid: "Ce lien ne fonctionne plus" },
  it: { forgot: "Password dimenticata?", send: "Invia link", sent: "Controlla la posta", subject: "Reimposta la password di Torii", title: "Scegli una nuova password", submit: "Imposta password", done: "Password cambiata", invalid: "Questo link non funziona più" },
} as const;

for (const [locale, tx] of Object.entries(TEXTS)) {
  test(`forgot password in ${locale}: mail, new password, old sessions gone, link used once`, async ({ browser }) => {
    const name = uniqueName(`reset${locale}`);
    const user = await createUser(name, PASSWORD, { locale });
    const email = `${name}@example.com`;
    expect(user.id).toBeTruthy();

    // A browser signed in before the reset.
    const before = await browser.newContext({ locale });
    const old = await before.newPage();
    await old.goto(rp.authorizeUrl({ ui_locales: locale }));
    await signIn(old, name);
    await old.waitForURL(rp.redirectUri + "**");

    // Another browser forgets the password.
    const ctx = await browser.newContext({ locale });
    const page = await ctx.newPage();
    await page.goto(rp.authorizeUrl({ ui_locales: locale }));
    await page.locator('input[name="loginName"]').fill(name);
    await page.locator('button[type="submit"]').click();
    await page.getByRole("link", { name: tx.forgot }).click();
    await expect(page.getByLabel(/.+/).first()).toHaveValue(name);
    await page.getByRole("button", { name: tx.send }).click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(tx.sent);
    await page.screenshot({ path: `${SHOTS}/reset-sent-${locale}.png` });

    const mail = await sink.waitFor((m) => m.to.includes(email));
    expect(mail.subject).toBe(tx.subject);
    const link = /https?:\/\/\S+\/ui\/login\/reset\?token=[A-Za-z0-9_%-]+/.exec(mail.text)![0];

    await page.goto(link);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(tx.title);
    if (locale === "en") {
      // The refused form's codes come back in the address, where anyone can write anything: the
      // page names only the policy's own (found by a probe: each made-up one was a logged
      // missing message, thousands per request).
      // 1,500 made-up codes (12 KB of address, within Node's 16 KB of request head) logged 18,000 lines.
      await page.goto(`${link}&error=policy&violations=${"made-up,".repeat(1500)}minLength,uppercase,minLength`);
      await expect(page.locator("#form-error")).toHaveText(/^The password does not meet the requirements: at least \d+ characters, an uppercase letter\.$/);
      await page.goto(`${link}&error=policy&violations=made-up,policy.x`);
      await expect(page.locator("#form-error")).toHaveText("The password does not meet the requirements:");
      await page.goto(link);
    }
    await page.locator("#password").fill("Brand-New-Horse-7");
    await page.locator("#confirm").fill("Brand-New-Horse-7");
    await page.screenshot({ path: `${SHOTS}/reset-form-${locale}.png` });
    await page.getByRole("button", { name: tx.submit }).click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(tx.done);

    // The link works once.
    await page.goto(link);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(tx.invalid);

    // The old browser's session is gone: prompt=none answers login_required.
    await old.goto(rp.authorizeUrl({ prompt: "none" }));
    await old.waitForURL(rp.redirectUri + "**");
    expect(callbackParams(old.url()).error).toBe("login_required");

    // The new password signs in.
    await page.goto(rp.authorizeUrl({ ui_locales: locale }));
    await signIn(page, name, "Brand-New-Horse-7");
    await page.waitForURL(rp.redirectUri + "**");
    expect(callbackParams(page.url()).code).toBeTruthy();
    await before.close();
    await ctx.close();
  });
}

test("registration off: no register link, and prompt=create shows a clear page with the way back", async ({ page }) => {
  expect((await adminApi("/settings", { method: "PUT", json: { registration: { enabled: false } } })).status).toBe(200);
  try {
    await page.goto(rp.authorizeUrl({}));
    await expect(page.locator('input[name="loginName"]')).toBeVisible();
    await expect(page.getByRole("link", { name: "Create an account" })).toHaveCount(0);
    await page.goto(rp.authorizeUrl({ prompt: "create" }));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Registration is closed");
    await page.getByRole("link", { name: "Sign in instead" }).click();
    await expect(page.locator('input[name="loginName"]')).toBeVisible();
  } finally {
    await adminApi("/settings", { method: "PUT", json: { registration: { enabled: true } } });
  }
});

test("registration with verification required: the code from the mail finishes the sign-in; the link confirms an address", async ({ browser }) => {
  expect((await adminApi("/settings", { method: "PUT", json: { emailVerification: "required" } })).status).toBe(200);
  const ctx = await browser.newContext({ locale: "en" });
  const page = await ctx.newPage();
  try {
    const name = uniqueName("vera");
    const email = `${name}@example.com`;
    await page.goto(rp.authorizeUrl({ prompt: "create" }));
    await page.getByLabel("Given name").fill("Vera");
    await page.getByLabel("Family name").fill("Verify");
    await page.getByLabel("Username").fill(name);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByLabel("Confirm password").fill(PASSWORD);
    await page.getByRole("button", { name: "Create account" }).click();
    const mail = await sink.waitFor((m) => m.to.includes(email));
    expect(mail.subject).toBe("Confirm your email address for Torii");
    const code = /: (\d{6})/.exec(mail.text)![1]!;

    // Signing in stops at the code page until the code from the mail is entered.
    await page.goto(rp.authorizeUrl({}));
    await signIn(page, name);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Confirm your email address");
    await expect(page.getByText(`${email[0]}•••@example.com`)).toBeVisible();
    await page.getByLabel("Code from the mail").fill("000000" === code ? "111111" : "000000");
    await page.getByRole("button", { name: "Confirm", exact: true }).click();
    await expect(page.locator("#form-error")).toContainText("That code is not right");
    await page.screenshot({ path: `${SHOTS}/verify-email-en.png` });
    await page.getByLabel("Code from the mail").fill(code);
    await page.getByRole("button", { name: "Confirm", exact: true }).click();
    await page.waitForURL(rp.redirectUri + "**");
    expect(callbackParams(page.url()).code).toBeTruthy();

    // The link of a second mail (an address changed by an administrator) confirms it with one click.
    const users = (await (await adminApi(`/users?search=${name}`)).json()) as { users: { id: string }[] };
    const changed = `${name}.new@example.com`;
    await adminApi(`/users/${users.users[0]!.id}`, { method: "PATCH", json: { email: changed } });
    const second = await sink.waitFor((m) => m.to.includes(changed));
    const link = /https?:\/\/\S+\/ui\/login\/verify\?token=[A-Za-z0-9_%-]+/.exec(second.text)![0];
    await page.goto(link);
    await page.getByRole("button", { name: "Confirm my address" }).click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Address confirmed");
    expect(((await (await adminApi(`/users/${users.users[0]!.id}`)).json()) as { emailVerified: boolean }).emailVerified).toBe(true);
    await page.goto(link);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("This link no longer works");
  } finally {
    await adminApi("/settings", { method: "PUT", json: { emailVerification: "optional" } });
    await ctx.close();
  }
});

test("a made-up or altered reset or confirmation link shows a clear page in the user's language and changes nothing", async ({ browser }) => {
  const ctx = await browser.newContext({ locale: "de" });
  const page = await ctx.newPage();
  try {
    const name = uniqueName("forged");
    const email = `${name.replace(/[^a-z0-9]/gi, "")}@example.com`;
    const user = await createUser(name, PASSWORD, { locale: "de" });
    for (const path of ["/ui/login/reset?token=forged", "/ui/login/reset?token=", "/ui/login/verify?token=forged"]) {
      await page.goto(path);
      await expect(page.getByRole("heading", { level: 1 })).toHaveText("Dieser Link gilt nicht mehr");
      await expect(page.locator("form")).toHaveCount(0);
    }
    await expect(page.getByText("Der Link wurde schon benutzt, ist abgelaufen oder unvollständig.")).toBeVisible();
    // A real link altered by one character is just as dead; the password still signs in.
    expect((await adminApi(`/users/${user.id}/password-reset`, { method: "POST" })).status).toBe(200);
    const mail = await sink.waitFor((m) => m.to.includes(email));
    const link = /https?:\/\/\S+\/ui\/login\/reset\?token=[A-Za-z0-9_%-]+/.exec(mail.text)![0];
    await page.goto(link.slice(0, -1) + (link.endsWith("A") ? "B" : "A"));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Dieser Link gilt nicht mehr");
    await page.goto(rp.authorizeUrl({}));
    await signIn(page, name);
    await page.waitForURL(rp.redirectUri + "**");
    expect(callbackParams(page.url()).code).toBeTruthy();
  } finally {
    await ctx.close();
  }
});
