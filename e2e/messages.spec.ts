import { expect, test, type Page } from "@playwright/test";
import { Secret, TOTP } from "otpauth";
import { createUser, RelyingParty } from "./rp";
import { PASSWORD, signIn, uniqueName } from "./login-helpers";
import { BASE_URL } from "./support";
import { CATALOGS } from "../lib/i18n/messages";

/**
 * Every login and account page is complete in every language. The test server shows a text
 * missing from a catalog as ⟦namespace.key⟧ (app/_server/i18n-request.ts, switched on by
 * scripts/e2e-server.mjs); each page below, in each of the four languages, must have none, in
 * its text or its attributes (labels, placeholders, titles). test/message-keys.test.ts checks
 * the keys the code names; this checks the ones a page picks at run time (errors, states).
 */

const LOCALES = ["en", "de", "fr", "it"] as const;
const MFA = "urn:torii:acr:mfa";
const appCode = (key: string, steps = 0) =>
  new TOTP({ secret: Secret.fromBase32(key.replace(/\s/g, "")), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: Date.now() + steps * 30_000 });

let rp: RelyingParty;
test.beforeAll(async () => {
  rp = await RelyingParty.start();
});
test.afterAll(async () => {
  await rp.stop();
});

/** Fails with the page's name and the missing keys when the page shows a marker. */
async function complete(page: Page, what: string, locale: string) {
  await expect(page.getByRole("heading", { level: 1 }).first()).toBeVisible();
  const html = await page.content();
  const markers = [...new Set(html.match(/⟦[^⟧]*⟧/g) ?? [])];
  expect(markers, `${what} in ${locale}`).toEqual([]);
  expect(await page.locator("html").getAttribute("lang"), `${what}: page language`).toBe(locale);
}

for (const locale of LOCALES) {
  test(`every login and account page is complete in ${locale}`, async ({ browser }) => {
    const name = uniqueName(`msg${locale}`);
    await createUser(name, PASSWORD, { locale });
    const ctx = await browser.newContext({ locale, javaScriptEnabled: false });
    const page = await ctx.newPage();

    // The login name page, an unknown-name answer is the password page all the same.
    await page.goto(rp.authorizeUrl({ ui_locales: locale }));
    await complete(page, "login name", locale);
    await page.locator('input[name="loginName"]').fill(name);
    await page.locator('button[type="submit"]').click();
    await complete(page, "password", locale);
    await page.locator('input[name="password"]').fill("wrong-password-1");
    await page.locator('button[type="submit"]').click();
    await expect(page.locator(".alert-error, [role=alert]").first()).toBeVisible();
    await complete(page, "password with an error", locale);

    // Forgot password: the form, then the answer.
    await page.locator(`a[href*="/ui/login/forgot"]`).click();
    await complete(page, "forgot password", locale);
    await page.locator('input[name="loginName"], input#loginName').first().fill(name);
    await page.locator('button[type="submit"]').click();
    await complete(page, "reset mail sent", locale);

    // Links that are forged: a clear page, not a key.
    await page.goto(`${BASE_URL}/ui/login/reset?token=forged-${locale}`);
    await complete(page, "forged reset link", locale);
    await page.goto(`${BASE_URL}/ui/login/verify?code=forged-${locale}`);
    await complete(page, "forged verification link", locale);

    // Registration, with an error, then the page after it.
    await page.goto(rp.authorizeUrl({ ui_locales: locale, prompt: "create" }));
    await complete(page, "registration", locale);
    await page.locator('input[name="username"]').fill(uniqueName("reg"));
    await page.locator('input[name="email"]').fill(`${uniqueName("reg")}@example.com`);
    await page.locator('input[name="password"]').fill("short");
    await page.locator('button[type="submit"]').click();
    await complete(page, "registration with an error", locale);

    // A sign-in that asks for a second factor: enrolment (with a wrong code), recovery codes.
    await page.goto(rp.authorizeUrl({ ui_locales: locale, acr_values: MFA, prompt: "login" }));
    await signIn(page, name);
    await complete(page, "second factor enrolment", locale);
    const key = (await page.getByTestId("totp-secret").textContent())!;
    await page.locator("#code").fill("000000");
    await page.locator('button[type="submit"]').click();
    await complete(page, "second factor enrolment with an error", locale);
    await page.locator("#code").fill(appCode(key));
    await page.locator('button[type="submit"]').click();
    await complete(page, "recovery codes", locale);
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(rp.redirectUri + "**");

    // Another browser: the factor's code page, with a wrong code.
    const other = await browser.newContext({ locale, javaScriptEnabled: false });
    const p2 = await other.newPage();
    await p2.goto(rp.authorizeUrl({ ui_locales: locale }));
    await signIn(p2, name);
    await complete(p2, "second factor", locale);
    await p2.locator("#code").fill("000000");
    await p2.locator('button[type="submit"]').click();
    await complete(p2, "second factor with an error", locale);
    await p2.locator("#code").fill(appCode(key, 1));
    await p2.locator('button[type="submit"]').click();
    await p2.waitForURL(rp.redirectUri + "**");

    // The account chooser, then the account page with its factors, sessions and events.
    await page.goto(rp.authorizeUrl({ ui_locales: locale, prompt: "select_account" }));
    await complete(page, "account chooser", locale);
    await p2.goto(`${BASE_URL}/ui/account`);
    await p2.waitForURL(`${BASE_URL}/ui/account**`);
    await complete(p2, "account page", locale);

    // An error the login shows itself (an unknown client), and the sign-out question.
    await page.goto(`${BASE_URL}/oauth/v2/authorize?client_id=nobody&redirect_uri=http://localhost/&response_type=code&scope=openid&ui_locales=${locale}`);
    await complete(page, "error page", locale);
    await page.goto(`${BASE_URL}/oidc/v1/end_session?ui_locales=${locale}`);
    await complete(page, "sign-out question", locale);
    await ctx.close();
    await other.close();
  });
}

/**
 * Runs of 25 or more letters, digits, spaces, commas and full stops from a catalog subtree: what
 * would appear verbatim in a page's HTML if the subtree were sent (quotes, apostrophes and
 * placeholders are escaped or filled in, so the runs stop at them).
 */
function sentences(tree: unknown): string[] {
  if (typeof tree === "string") return tree.match(/[\p{L}\p{N} ,.]{25,}/gu) ?? [];
  return tree && typeof tree === "object" ? Object.values(tree).flatMap(sentences) : [];
}

for (const locale of LOCALES) {
  // Pages render their texts on the server; the browser gets only what a client component of the
  // page translates (app/layout.tsx). The whole catalog used to come with every page.
  test(`the login page sends the browser none of the console's, the account page's or the mails' texts in ${locale}`, async ({ page }) => {
    const catalog = CATALOGS[locale];
    const res = await page.goto(rp.authorizeUrl({ ui_locales: locale }));
    await expect(page.locator('input[name="loginName"]')).toBeVisible();
    const html = await res!.text();
    for (const namespace of ["console", "account", "mail"]) {
      const texts = sentences(catalog[namespace]);
      expect(texts.length, `${namespace} has sentences to look for`).toBeGreaterThan(5);
      expect(texts.filter((t) => html.includes(t)), `${namespace} texts in the login page`).toEqual([]);
    }
  });
}
