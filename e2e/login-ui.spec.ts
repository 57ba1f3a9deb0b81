import { expect, test, type Page } from "@playwright/test";
import { createUser, RelyingParty } from "./rp";
import { callbackParams, PASSWORD, signIn, uniqueName } from "./login-helpers";
import { adminApi, BASE_URL, SHOTS } from "./support";

let rp: RelyingParty;
let anna: string;
let ben: string;

test.beforeAll(async () => {
  rp = await RelyingParty.start();
  anna = uniqueName("anna");
  ben = uniqueName("ben");
  await createUser(anna, PASSWORD, { givenName: "Anna", familyName: "Muster" });
  await createUser(ben, PASSWORD, { givenName: "Ben", familyName: "Beispiel" });
});
test.afterAll(() => rp.stop());

const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });

test("ui_locales picks the language and it stays through the flow; Accept-Language otherwise", async ({ browser }) => {
  const ctx = await browser.newContext({ locale: "fr-FR" });
  const page = await ctx.newPage();
  await page.goto(rp.authorizeUrl({ ui_locales: "it de" }));
  await expect(page.locator("html")).toHaveAttribute("lang", "it");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Accedi");
  await page.locator('input[name="loginName"]').fill(anna);
  await page.locator('button[type="submit"]').click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Inserisci la password");
  await expect(page.locator("html")).toHaveAttribute("lang", "it");

  await page.goto(rp.authorizeUrl({ prompt: "login" }));
  await expect(page.locator("html")).toHaveAttribute("lang", "fr");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Se connecter");
  await page.goto(rp.authorizeUrl({ prompt: "login", ui_locales: "xx-YY" }));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Se connecter");
  await ctx.close();
});

test("a page without a pinned locale falls back to the instance's default language", async ({ browser }) => {
  expect((await adminApi("/settings", { method: "PUT", json: { defaultLocale: "de" } })).status).toBe(200);
  // Japanese is not supported, so neither the cookie (none) nor Accept-Language decides.
  const ctx = await browser.newContext({ locale: "ja-JP", extraHTTPHeaders: { "Accept-Language": "ja" } });
  try {
    const page = await ctx.newPage();
    await page.goto(`${BASE_URL}/ui/login/signedout`);
    await expect(page.locator("html")).toHaveAttribute("lang", "de");
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sie sind abgemeldet");
  } finally {
    await ctx.close();
    await adminApi("/settings", { method: "PUT", json: { defaultLocale: "en" } });
  }
});

test("a login page opened without a sign-in request signs in to the account page; a request that is gone says so", async ({ page }) => {
  for (const path of ["/ui/login", "/ui/login/password", "/ui/login/forgot"]) {
    await page.goto(`${BASE_URL}${path}`);
    await expect(page).toHaveURL(/\/ui\/login\?authRequest=/);
    await expect(page.locator('input[name="loginName"]')).toBeVisible();
  }
  await page.goto(`${BASE_URL}/ui/login?authRequest=gone`);
  await expect(page.locator("#error-message")).toHaveText("This sign-in request has expired or was already used.");
});

test("the account chooser with two users, in English and German (screenshots)", async ({ browser }) => {
  for (const locale of ["en", "de"] as const) {
    const ctx = await browser.newContext({ locale, viewport: { width: 1280, height: 800 } });
    const page = await ctx.newPage();
    await page.goto(rp.authorizeUrl({}));
    await shot(page, `login-${locale}-desktop`);
    await signIn(page, anna);
    await page.waitForURL(rp.redirectUri + "**");
    await page.goto(rp.authorizeUrl({ prompt: "login", login_hint: ben }));
    await page.locator('button[type="submit"]').click();
    await expect(page.locator('input[name="password"]')).toBeVisible();
    await shot(page, `password-${locale}-desktop`);
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(rp.redirectUri + "**");

    await page.goto(rp.authorizeUrl({ state: "c" }));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(locale === "en" ? "Choose an account" : "Konto auswählen");
    await expect(page.locator(".account")).toHaveCount(2);
    await shot(page, `chooser-${locale}-desktop`);
    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, `chooser-${locale}-phone`);
    await page.locator(".account", { hasText: "Ben Beispiel" }).click();
    await page.waitForURL(rp.redirectUri + "**");
    const tokens = await rp.exchange(callbackParams(page.url()).code!);
    const claims = await rp.verifyIdToken(tokens.id_token as string);
    expect(claims.sub).not.toBeUndefined();

    // select_account with a login_hint puts the hinted account first.
    await page.goto(rp.authorizeUrl({ prompt: "select_account", login_hint: ben }));
    await expect(page.locator(".account").first()).toContainText("Ben Beispiel");
    await page.keyboard.press("Enter");
    await page.waitForURL(rp.redirectUri + "**");
    await ctx.close();
  }
});

test("registration: errors are explained, then the new user signs in; a taken name looks the same (screenshots)", async ({ browser }) => {
  for (const locale of ["en", "de"] as const) {
    const ctx = await browser.newContext({ locale, viewport: { width: 390, height: 844 } });
    const page = await ctx.newPage();
    await page.goto(rp.authorizeUrl({ prompt: "create", nonce: "reg" }));
    await expect(page.locator("h1")).toHaveCount(1);
    await shot(page, `register-${locale}-phone`);
    const username = uniqueName("new");
    await page.locator('input[name="username"]').fill(username);
    await page.locator('input[name="email"]').fill("not-an-email");
    await page.locator('input[name="givenName"]').fill("Neu");
    await page.locator('input[name="familyName"]').fill("Person");
    await page.locator('input[name="password"]').fill("short");
    await page.locator('input[name="passwordConfirmation"]').fill("short");
    await page.locator('button[type="submit"]').click();
    await expect(page.locator("#email-error")).toBeVisible();
    await expect(page.locator("#password-error")).toBeVisible();
    await expect(page.locator('input[name="username"]')).toHaveValue(username);
    await page.setViewportSize({ width: 1280, height: 900 });
    await shot(page, `register-${locale}-errors-desktop`);
    await page.locator('input[name="email"]').fill(`${username}@example.com`);
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.locator('input[name="passwordConfirmation"]').fill(PASSWORD + "x");
    await page.locator('button[type="submit"]').click();
    await expect(page.locator("#passwordConfirmation-error")).toBeVisible();
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.locator('input[name="passwordConfirmation"]').fill(PASSWORD);
    await page.locator('button[type="submit"]').click();
    // A neutral page, the same whether or not the name was free; then the password step.
    await page.waitForURL("**/ui/login/registered?**");
    await expect(page.locator("h1")).toHaveText(locale === "en" ? "Thank you" : "Vielen Dank");
    await expect(page.getByTestId("registered-lead")).toContainText(username);
    const neutral = await page.locator("main").innerText();
    await shot(page, `registered-${locale}-phone`);
    await page.getByRole("link", { name: locale === "en" ? "Continue to sign in" : "Weiter zur Anmeldung" }).click();
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(rp.redirectUri + "**");
    const tokens = await rp.exchange(callbackParams(page.url()).code!);
    const claims = await rp.verifyIdToken(tokens.id_token as string, "reg");
    expect(claims.sub).toBeTruthy();
    // A taken username continues exactly like a new one: the same page, no word about the name.
    await page.goto(rp.authorizeUrl({ prompt: "create" }));
    await page.locator('input[name="username"]').fill(username);
    await page.locator('input[name="email"]').fill(`${uniqueName("other")}@example.com`);
    await page.locator('input[name="givenName"]').fill("X");
    await page.locator('input[name="familyName"]').fill("Y");
    await page.locator('input[name="password"]').fill(PASSWORD + "-other");
    await page.locator('input[name="passwordConfirmation"]').fill(PASSWORD + "-other");
    await page.locator('button[type="submit"]').click();
    await page.waitForURL("**/ui/login/registered?**");
    expect(await page.locator("main").innerText()).toBe(neutral);
    // The password chosen there does not open the existing account.
    await page.getByRole("link", { name: locale === "en" ? "Continue to sign in" : "Weiter zur Anmeldung" }).click();
    await page.locator('input[name="password"]').fill(PASSWORD + "-other");
    await page.locator('button[type="submit"]').click();
    await expect(page.locator(".alert")).toHaveText(locale === "en" ? "The login name or password is incorrect." : "Anmeldename oder Passwort ist falsch.");
    await ctx.close();
  }
});

test("a wrong password and an unknown login name look the same; many failures lock the account for unknown browsers", async ({ page }) => {
  // No throttling delays (they depend on the machine's speed), a lock after three failures.
  await adminApi("/settings", { method: "PUT", json: { lockoutPolicy: { freeFailures: 100, lockAfterFailures: 3 } } });
  try {
    const victim = uniqueName("victim");
    await createUser(victim, PASSWORD);
    await page.goto(rp.authorizeUrl({}));
    await signIn(page, uniqueName("nobody"), "whatever-123");
    const unknownMessage = await page.locator(".alert").textContent();
    await page.goto(rp.authorizeUrl({}));
    await signIn(page, victim, "wrong-password-1");
    expect(await page.locator(".alert").textContent()).toBe(unknownMessage);
    expect(unknownMessage).toBe("The login name or password is incorrect.");
    for (let i = 2; i <= 3; i++) {
      await page.locator('input[name="password"]').fill(`wrong-password-${i}`);
      await page.locator('button[type="submit"]').click();
      await expect(page.locator(".alert")).toBeVisible();
    }
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.locator('button[type="submit"]').click();
    await expect(page.locator(".alert")).toContainText("Too many failed sign-ins for this account");
    await shot(page, "lockout-en-desktop");
    expect(page.url()).not.toContain(rp.redirectUri);
  } finally {
    await adminApi("/settings", { method: "PUT", json: { lockoutPolicy: { freeFailures: 5, lockAfterFailures: 50 } } });
  }
});

test("forms are CSRF-protected and pages cannot be framed", async ({ page, request }) => {
  await page.goto(rp.authorizeUrl({}));
  const res = await request.get(page.url());
  expect(res.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
  expect(res.headers()["x-frame-options"]).toBe("DENY");
  await page.locator('form:has(input[name="loginName"]) input[name="csrf"]').evaluate((el) => ((el as HTMLInputElement).value = "forged"));
  await page.locator('input[name="loginName"]').fill(anna);
  await page.locator('button[type="submit"]').click();
  await expect(page.locator(".alert")).toHaveText("The form could not be verified. Reload the page and try again.");
  // A post from another site carries neither the SameSite cookie nor the token.
  const forged = await request.post("/ui/login/submit/loginname", {
    form: { authRequest: "x", loginName: anna },
    headers: { origin: "https://evil.example" },
    maxRedirects: 0,
  });
  expect(forged.status()).toBe(303);
  expect(forged.headers().location).toContain("/ui/login/error");
});
