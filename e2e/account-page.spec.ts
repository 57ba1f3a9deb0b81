import { expect, test, type Page } from "@playwright/test";
import { Secret, TOTP } from "otpauth";
import { createUser, RelyingParty } from "./rp";
import { callbackParams, PASSWORD, signIn, uniqueName } from "./login-helpers";
import { BASE_URL, SHOTS } from "./support";

/**
 * The account page as its owner uses it, without JavaScript: sign in to it, change the profile,
 * the password (other sessions end), add an authenticator app (recovery codes shown once), make
 * new recovery codes, remove the factor, see and end sessions, withdraw an application's access,
 * change the address, read the security events, sign out; and the page in every language.
 */

let rp: RelyingParty;
test.beforeAll(async () => {
  rp = await RelyingParty.start();
});
test.afterAll(async () => {
  await rp.stop();
});

const appCode = (key: string, steps = 0) =>
  new TOTP({ secret: Secret.fromBase32(key.replace(/\s/g, "")), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: Date.now() + steps * 30_000 });

async function openAccount(page: Page, name: string, password = PASSWORD) {
  await page.goto(`${BASE_URL}/ui/account`);
  await signIn(page, name, password);
  await page.waitForURL(`${BASE_URL}/ui/account`);
}

const status = (page: Page, section: string) => page.locator(`#${section} [role="status"]`);
const alert = (page: Page, section: string) => page.locator(`#${section} [role="alert"]`);

test("the owner manages the account: profile, password, authenticator and recovery codes, sessions, applications, address, events", async ({ browser }) => {
  const name = uniqueName("acct");
  const user = await createUser(name, PASSWORD);
  // Another browser signed in to an application: a session and an application with access.
  const firefox = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0";
  const elsewhere = await browser.newContext({ javaScriptEnabled: false, userAgent: firefox });
  const other = await elsewhere.newPage();
  const { verifier, challenge } = RelyingParty.pkce();
  await other.goto(rp.authorizeUrl({ code_challenge: challenge, code_challenge_method: "S256", scope: "openid offline_access", prompt: "consent" }));
  await signIn(other, name);
  await other.waitForURL(rp.redirectUri + "**");
  const tokens = await rp.exchange(callbackParams(other.url()).code!, verifier);
  expect(tokens.refresh_token).toBeTruthy();

  const ctx = await browser.newContext({ javaScriptEnabled: false, locale: "en" });
  const page = await ctx.newPage();
  await openAccount(page, name);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Your account");

  // Profile.
  await page.locator("#givenName").fill("Ada");
  await page.locator("#familyName").fill("Lovelace");
  await page.locator("#profile button[type=submit]").click();
  await expect(status(page, "profile")).toHaveText("Your profile was saved.");
  await expect(page.locator("#givenName")).toHaveValue("Ada");
  // The profile's language is the page's too, at once; "as my browser says" gives it back.
  await page.locator("#locale").selectOption("de");
  await page.locator("#profile button[type=submit]").click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Ihr Konto");
  await page.locator("#locale").selectOption("");
  await page.locator("#profile button[type=submit]").click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Your account");

  // Sessions: this browser and the other one, each told by its browser, system and address.
  const sessions = page.getByTestId("session-list").locator("li");
  await expect(sessions).toHaveCount(2);
  const ip = /IP address (127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/;
  await expect(sessions.filter({ hasText: "This browser" }).getByTestId("session-device")).toHaveText(/^Chrome on Linux · /);
  await expect(sessions.filter({ hasText: "This browser" }).getByTestId("session-device")).toHaveText(ip);
  // How it signed in, in words rather than RFC 8176 codes.
  await expect(sessions.filter({ hasText: "This browser" })).toContainText("· with password");
  await expect(sessions.filter({ hasText: "Another browser" }).getByTestId("session-device")).toHaveText(/^Firefox on Windows · /);
  await expect(sessions.filter({ hasText: "Another browser" }).getByTestId("session-device")).toHaveText(ip);
  // Applications: the relying party.
  await expect(page.getByTestId("app-list")).toContainText("E2E Relying Party");

  // Password: wrong current one, then the policy, then a good one; the other browser is signed out.
  await page.locator("#current").fill("not-it");
  await page.locator("#new-password").fill("Another-Horse-43");
  await page.locator("#confirm").fill("Another-Horse-43");
  await page.locator("#password button[type=submit]").click();
  await expect(alert(page, "password")).toHaveText("Your current password is not right.");
  await page.locator("#current").fill(PASSWORD);
  await page.locator("#new-password").fill("short");
  await page.locator("#confirm").fill("short");
  await page.locator("#password button[type=submit]").click();
  await expect(alert(page, "password")).toContainText("does not meet the requirements");
  await page.locator("#current").fill(PASSWORD);
  await page.locator("#new-password").fill("Another-Horse-43");
  await page.locator("#confirm").fill("Another-Horse-43");
  await page.locator("#password button[type=submit]").click();
  await expect(status(page, "password")).toContainText("Your password was changed.");
  await expect(page.getByTestId("session-list").locator("li")).toHaveCount(1);
  await other.goto(rp.authorizeUrl({ prompt: "none" }));
  await other.waitForURL(rp.redirectUri + "**");
  expect(callbackParams(other.url()).error).toBe("login_required");
  // Its refresh token went with its session.
  const refreshed = await fetch(`${BASE_URL}/oauth/v2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: "Basic " + Buffer.from(`${rp.clientId}:${rp.clientSecret!}`).toString("base64") },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: tokens.refresh_token as string }),
  });
  expect(refreshed.status).toBe(400);

  // An authenticator app: the QR code's key, a code, then the recovery codes once.
  await page.getByRole("link", { name: "Add an authenticator app" }).click();
  await expect(page.locator("#factors .qr-code svg")).toBeVisible();
  const key = (await page.getByTestId("totp-secret").textContent())!;
  // A mistyped code: the form stays open with the same key, so the code can be typed again.
  await page.locator("#factor-code").fill(appCode(key) === "000000" ? "111111" : "000000");
  await page.locator("#factors form[action$='add-authenticator'] button").click();
  await expect(page.locator("#factors")).toContainText("That code is not right");
  await expect(page.getByTestId("totp-secret")).toHaveText(key);
  await page.locator("#factor-name").fill("Work phone");
  await page.locator("#factor-code").fill(appCode(key));
  await page.screenshot({ path: `${SHOTS}/account-add-authenticator.png`, fullPage: true });
  await page.locator("#factors form[action$='add-authenticator'] button").click();
  await expect(status(page, "factors")).toContainText("Two-step verification is on");
  // Shown once, so the page opens where they are.
  await expect(page.getByTestId("recovery-codes")).toBeInViewport();
  const codes = await page.getByTestId("recovery-codes").locator("li").allTextContents();
  expect(codes).toHaveLength(10);
  await expect(page.getByTestId("factor-list")).toContainText("Work phone");
  await page.screenshot({ path: `${SHOTS}/account-recovery-codes.png`, fullPage: true });
  await page.getByRole("button", { name: "I have saved them" }).click();
  await expect(page.getByTestId("recovery-codes")).toHaveCount(0);
  await expect(page.getByTestId("recovery-left")).toHaveText("10 unused recovery codes left.");

  // New recovery codes replace the old ones.
  await page.getByRole("button", { name: "Create new recovery codes" }).click();
  await expect(page.getByTestId("recovery-codes")).toBeInViewport();
  const fresh = await page.getByTestId("recovery-codes").locator("li").allTextContents();
  expect(fresh).toHaveLength(10);
  expect(fresh).not.toContain(codes[0]);
  await page.getByRole("button", { name: "I have saved them" }).click();

  // The next sign-in (another browser) asks for the app's code; an old recovery code no longer works.
  const third = await browser.newContext({ javaScriptEnabled: false });
  const p3 = await third.newPage();
  await p3.goto(rp.authorizeUrl({}));
  await signIn(p3, name, "Another-Horse-43");
  await p3.locator("#code").fill(codes[0]!);
  await p3.locator('button[type="submit"]').click();
  await expect(p3.getByRole("alert")).toBeVisible();
  await p3.locator("#code").fill(fresh[0]!);
  await p3.locator('button[type="submit"]').click();
  await p3.waitForURL(rp.redirectUri + "**");
  await third.close();

  // Remove the factor: no second factor any more.
  await page.reload();
  await page.getByRole("button", { name: "Remove Work phone" }).click();
  await expect(status(page, "factors")).toHaveText("The second factor was removed.");
  await expect(page.locator("#factors")).toContainText("No second factor yet.");

  // The application's access is withdrawn.
  await expect(page.getByTestId("app-list")).toContainText("E2E Relying Party");
  await page.getByRole("button", { name: "Withdraw access of E2E Relying Party" }).click();
  await expect(status(page, "apps")).toHaveText("The application's access was withdrawn.");
  await expect(page.locator("#apps")).toContainText("No application has access to your account.");

  // A new address is unconfirmed until the mail comes back.
  await page.locator("#new-email").fill(`${name}.new@example.com`);
  await page.locator("#email button[type=submit]").click();
  await expect(status(page, "email")).toContainText("Your email address was changed.");
  await expect(page.getByTestId("email-state")).toContainText("not confirmed");

  // The security events tell the story.
  await expect(page.getByTestId("event-list")).toContainText(`${name} changed the password of ${name}`);
  await page.screenshot({ path: `${SHOTS}/account-en.png`, fullPage: true });

  // Sign out: the page asks to sign in again.
  await page.getByRole("button", { name: "Sign out" }).first().click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Signed out");
  await page.goto(`${BASE_URL}/ui/account`);
  await expect(page.locator('input[name="loginName"]')).toBeVisible();
  expect(user.id).toBeTruthy();
  await Promise.all([ctx.close(), elsewhere.close()]);
});

test("a notice named in the address by a name every object has shows the general message, not a key", async ({ browser }) => {
  const name = uniqueName("acct");
  await createUser(name, PASSWORD);
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await openAccount(page, name);
  for (const q of ["error=__proto__", "error=toString", "section=profile&error=constructor", "section=password&error=passwordPolicy&violations=__proto__,minLength"]) {
    const res = await page.goto(`${BASE_URL}/ui/account?${q}`);
    expect(res?.status()).toBe(200);
    await expect(page.getByRole("alert").first()).toContainText(q.includes("passwordPolicy") ? "" : "Something went wrong on our side");
    await expect(page.locator("body")).not.toContainText("account.errors");
  }
  await ctx.close();
});

test("the account page needs a recent sign-in to change second factors, and a form without its CSRF token changes nothing", async ({ browser, request }) => {
  const name = uniqueName("acct");
  await createUser(name, PASSWORD);
  const ctx = await browser.newContext({ javaScriptEnabled: false });
  const page = await ctx.newPage();
  await openAccount(page, name);
  const forged = await request.post(`${BASE_URL}/ui/account/submit/profile`, { form: { givenName: "Mallory" }, maxRedirects: 0 });
  // No account session in this request context: sent to sign in, nothing changed.
  expect(forged.status()).toBe(303);
  expect(forged.headers().location).toContain("/ui/account/signin");
  const cookies = await ctx.cookies();
  const withCookies = await request.post(`${BASE_URL}/ui/account/submit/profile`, {
    form: { givenName: "Mallory", csrf: "wrong" },
    headers: { cookie: cookies.map((c) => `${c.name}=${c.value}`).join("; "), origin: BASE_URL },
    maxRedirects: 0,
  });
  expect(withCookies.status()).toBe(403);
  await page.reload();
  await expect(page.locator("#givenName")).not.toHaveValue("Mallory");
  // The page cannot be framed.
  const res = await request.get(`${BASE_URL}/ui/account`, { headers: { cookie: cookies.map((c) => `${c.name}=${c.value}`).join("; ") } });
  expect(`${res.headers()["x-frame-options"] ?? ""} ${res.headers()["content-security-policy"] ?? ""}`).toMatch(/DENY|frame-ancestors 'none'/);
  await ctx.close();
});

const TITLES = { en: "Your account", de: "Ihr Konto", fr: "Votre compte", it: "Il tuo account" } as const;
for (const [locale, title] of Object.entries(TITLES)) {
  test(`the account page in ${locale}`, async ({ browser }) => {
    const name = uniqueName(`acct${locale}`);
    await createUser(name, PASSWORD);
    for (const width of [1280, 390]) {
      const ctx = await browser.newContext({ locale, viewport: { width, height: 900 } });
      const page = await ctx.newPage();
      await openAccount(page, name);
      await expect(page.getByRole("heading", { level: 1 })).toHaveText(title);
      await expect(page.locator("html")).toHaveAttribute("lang", locale);
      await page.screenshot({ path: `${SHOTS}/account-${locale}-${width}.png`, fullPage: true });
      await ctx.close();
    }
  });
}
