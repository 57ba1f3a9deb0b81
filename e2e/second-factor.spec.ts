import { expect, test } from "@playwright/test";
import { Secret, TOTP } from "otpauth";
import { createUser, RelyingParty } from "./rp";
import { callbackParams, signIn, uniqueName } from "./login-helpers";
import { adminApi, SHOTS } from "./support";
import { CONSOLE, consoleSession, createAdmin } from "./console-helpers";

/**
 * Second factors in the browser, in every language: a client asks for a multi-factor sign-in
 * (acr_values), the user sets up an authenticator from the QR code's key, sees the recovery codes
 * once, and the relying party gets an ID token with amr mfa; the next sign-in in another browser
 * asks for the app's code, and a recovery code works in its place. No JavaScript needed.
 */

const MFA = "urn:torii:acr:mfa";
const TEXTS = {
  en: { enrol: "Set up two-step verification", codes: "Save your recovery codes", factor: "Two-step verification" },
  de: { enrol: "Bestätigung in zwei Schritten einrichten", codes: "Wiederherstellungscodes sichern", factor: "Bestätigung in zwei Schritten" },
  fr: { enrol: "Configurer la validation en deux étapes", codes: "Conservez vos codes de récupération", factor: "Validation en deux étapes" },
  it: { enrol: "Configura la verifica in due passaggi", codes: "Salva i tuoi codici di recupero", factor: "Verifica in due passaggi" },
} as const;

let rp: RelyingParty;
test.beforeAll(async () => {
  rp = await RelyingParty.start();
});
test.afterAll(async () => {
  await rp.stop();
});

const appCode = (key: string, steps = 0) =>
  new TOTP({ secret: Secret.fromBase32(key.replace(/\s/g, "")), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: Date.now() + steps * 30_000 });

for (const [locale, tx] of Object.entries(TEXTS)) {
  test(`two-step verification in ${locale}: enrol from the QR code's key, recovery codes once, the code next time, a recovery code instead`, async ({ browser }) => {
    const name = uniqueName(`mfa${locale}`);
    await createUser(name, "Correct-Horse-42", { locale });
    const { verifier, challenge } = RelyingParty.pkce();
    const ctx = await browser.newContext({ locale, javaScriptEnabled: false });
    const page = await ctx.newPage();
    await page.goto(rp.authorizeUrl({ ui_locales: locale, acr_values: MFA, code_challenge: challenge, code_challenge_method: "S256" }));
    await signIn(page, name);

    await expect(page.getByRole("heading", { level: 1 })).toHaveText(tx.enrol);
    await expect(page.locator(".qr-code svg")).toBeVisible();
    const key = (await page.getByTestId("totp-secret").textContent())!;
    expect(key.replace(/\s/g, "")).toMatch(/^[A-Z2-7]{32}$/);
    await page.screenshot({ path: `${SHOTS}/mfa-enrol-${locale}.png`, fullPage: true });
    // The very code used here is good once, whatever the clock does before it is tried again.
    const enrolCode = appCode(key);
    await page.locator("#code").fill(enrolCode);
    await page.locator('button[type="submit"]').click();

    await expect(page.getByRole("heading", { level: 1 })).toHaveText(tx.codes);
    const codes = await page.getByTestId("recovery-codes").locator("li").allTextContents();
    expect(codes).toHaveLength(10);
    await page.screenshot({ path: `${SHOTS}/mfa-recovery-codes-${locale}.png`, fullPage: true });
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(rp.redirectUri + "**");
    const tokens = await rp.exchange(callbackParams(page.url()).code!, verifier);
    const claims = await rp.verifyIdToken(tokens.id_token as string);
    expect(claims.amr).toEqual(["pwd", "otp", "mfa"]);
    expect(claims.acr).toBe(MFA);

    // Another browser: the password, then the app's next code (the one used above is spent).
    const other = await browser.newContext({ locale, javaScriptEnabled: false });
    const p2 = await other.newPage();
    await p2.goto(rp.authorizeUrl({ ui_locales: locale }));
    await signIn(p2, name);
    await expect(p2.getByRole("heading", { level: 1 })).toHaveText(tx.factor);
    await p2.locator("#code").fill(enrolCode);
    await p2.locator('button[type="submit"]').click();
    await expect(p2.locator(".alert-error")).toBeVisible();
    await p2.screenshot({ path: `${SHOTS}/mfa-code-wrong-${locale}.png`, fullPage: true });
    await p2.locator("#code").fill(appCode(key, 1));
    await p2.locator('button[type="submit"]').click();
    await p2.waitForURL(rp.redirectUri + "**");
    expect(callbackParams(p2.url()).code).toBeTruthy();

    // A third browser has lost the phone: a recovery code instead.
    const third = await browser.newContext({ locale, javaScriptEnabled: false });
    const p3 = await third.newPage();
    await p3.goto(rp.authorizeUrl({ ui_locales: locale }));
    await signIn(p3, name);
    await expect(p3.getByRole("heading", { level: 1 })).toHaveText(tx.factor);
    await p3.locator("#code").fill(codes[3]!);
    await p3.locator('button[type="submit"]').click();
    await p3.waitForURL(rp.redirectUri + "**");
    expect(callbackParams(p3.url()).code).toBeTruthy();

    // The same recovery code a second time: refused.
    const fourth = await browser.newContext({ locale, javaScriptEnabled: false });
    const p4 = await fourth.newPage();
    await p4.goto(rp.authorizeUrl({ ui_locales: locale }));
    await signIn(p4, name);
    await p4.locator("#code").fill(codes[3]!);
    await p4.locator('button[type="submit"]').click();
    await expect(p4.getByRole("heading", { level: 1 })).toHaveText(tx.factor);
    await expect(p4.locator(".alert-error")).toBeVisible();
    await Promise.all([ctx.close(), other.close(), third.close(), fourth.close()]);
  });
}

test("a required second factor: a user without one sets one up at the next sign-in, whatever the application asks", async ({ browser }) => {
  const name = uniqueName("mfareq");
  await createUser(name, "Correct-Horse-42");
  expect((await adminApi("/settings", { method: "PUT", json: { mfa: "required" } })).status).toBe(200);
  try {
    const ctx = await browser.newContext({ javaScriptEnabled: false });
    const page = await ctx.newPage();
    await page.goto(rp.authorizeUrl({}));
    await signIn(page, name);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(TEXTS.en.enrol);
    const key = (await page.getByTestId("totp-secret").textContent())!;
    await page.locator("#code").fill(appCode(key));
    await page.locator('button[type="submit"]').click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(TEXTS.en.codes);
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(rp.redirectUri + "**");
    expect(callbackParams(page.url()).code).toBeTruthy();
    await ctx.close();
  } finally {
    await adminApi("/settings", { method: "PUT", json: { mfa: "optional" } });
  }
});

test("the console's list of a user's second factors fits a 1000 px window in every language (no sideways scrolling)", async ({ browser }) => {
  const name = uniqueName("mfafit");
  const { id } = await createUser(name, "Correct-Horse-42");
  const ctx = await browser.newContext({ javaScriptEnabled: false });
  const page = await ctx.newPage();
  await page.goto(rp.authorizeUrl({ acr_values: MFA }));
  await signIn(page, name);
  await page.locator("#code").fill(appCode((await page.getByTestId("totp-secret").textContent())!));
  await page.locator('button[type="submit"]').click();
  await page.locator('button[type="submit"]').click();
  await page.waitForURL(rp.redirectUri + "**");
  await ctx.close();
  const admin = await createAdmin("mfafitadmin");
  for (const locale of Object.keys(TEXTS)) {
    const { context, page: c } = await consoleSession(browser, admin.name, { locale, width: 1000 });
    await c.goto(`${CONSOLE}/users/${id}`);
    const table = c.locator("#section-factors .table-wrap");
    await expect(table.locator("tbody tr")).toHaveCount(1);
    const [scroll, visible] = await table.evaluate((e) => [e.scrollWidth, e.clientWidth]);
    expect(scroll, locale).toBeLessThanOrEqual(visible);
    await c.screenshot({ path: `${SHOTS}/console-factors-${locale}-1000.png`, fullPage: true });
    await context.close();
  }
});
