import { expect, test, type BrowserContext, type Page } from "@playwright/test";
import { createUser, RelyingParty } from "./rp";
import { callbackParams, PASSWORD, signIn, uniqueName } from "./login-helpers";
import { BASE_URL, SHOTS } from "./support";

/**
 * Passkeys in Chromium with its virtual authenticator (CDP WebAuthn domain, a platform
 * authenticator with user verification): created on the account page, then used alone on the
 * first login page ("Sign in with a passkey", no name, no password), on the password page of a
 * sign-in again, and as the second step after a password; the ID token says what was used.
 */

let rp: RelyingParty;
test.beforeAll(async () => {
  rp = await RelyingParty.start();
});
test.afterAll(async () => {
  await rp.stop();
});

type Device = {
  credentials: () => Promise<{ credentialId: string; signCount: number; isResidentCredential: boolean }[]>;
  /**
   * The same device in another browser profile: its credentials, with their signature counters,
   * moved to a new virtual authenticator there. Use the returned one from then on: the server
   * refuses a counter that goes back (a cloned authenticator).
   */
  moveTo: (other: Page) => Promise<Device>;
};

/** A platform authenticator that holds discoverable credentials and verifies the user. */
async function virtualAuthenticator(page: Page, from?: Device): Promise<Device> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  const all = async () => (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials;
  if (from) for (const credential of await (from as Device & { raw: typeof all }).raw()) await cdp.send("WebAuthn.addCredential", { authenticatorId, credential });
  const device: Device & { raw: typeof all } = { raw: all, credentials: all, moveTo: (other) => virtualAuthenticator(other, device) };
  return device;
}

async function newPage(browser: import("@playwright/test").Browser, locale = "en"): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ locale });
  return { ctx, page: await ctx.newPage() };
}

test("a passkey made on the account page signs in alone, and serves as the second step after a password", async ({ browser }) => {
  const name = uniqueName("pk");
  await createUser(name, PASSWORD);
  const { ctx, page } = await newPage(browser);
  const device = await virtualAuthenticator(page);

  // The account page: add a passkey (a fresh sign-in, so factor changes are allowed).
  await page.goto(`${BASE_URL}/ui/account`);
  await signIn(page, name);
  await page.waitForURL(`${BASE_URL}/ui/account`);
  await page.getByRole("link", { name: "Add a passkey" }).click();
  await page.locator("#passkey-name").fill("Laptop");
  await page.screenshot({ path: `${SHOTS}/passkey-add.png`, fullPage: true });
  await page.getByRole("button", { name: "Create a passkey" }).click();
  await expect(page.locator('#factors [role="status"]')).toContainText("Your passkey was added");
  await expect(page.getByTestId("factor-list")).toContainText("Laptop");
  // A first factor comes with recovery codes.
  await expect(page.getByTestId("recovery-codes").locator("li")).toHaveCount(10);
  const stored = await device.credentials();
  expect(stored).toHaveLength(1);
  expect(stored[0]!.isResidentCredential).toBe(true);

  // Passwordless with the button: the same device in a browser with no session. (The device is
  // attached once the page is shown: Chromium's virtual authenticator would otherwise answer the
  // page's autofill offer at once, which the next case shows.)
  const other = await newPage(browser);
  const { verifier, challenge } = RelyingParty.pkce();
  await other.page.goto(rp.authorizeUrl({ code_challenge: challenge, code_challenge_method: "S256" }));
  await expect(other.page.getByRole("button", { name: "Sign in with a passkey" })).toBeVisible();
  await other.page.screenshot({ path: `${SHOTS}/passkey-login.png`, fullPage: true });
  const onOther = await device.moveTo(other.page);
  const browserCookie = async () => (await other.ctx.cookies(BASE_URL)).find((c) => c.name === "torii_ua")?.value;
  const before = await browserCookie();
  expect(before).toBeTruthy();
  await other.page.getByRole("button", { name: "Sign in with a passkey" }).click();
  await other.page.waitForURL(rp.redirectUri + "**");
  // The sign-in renewed the browser's cookie (as a password sign-in does).
  expect(await browserCookie()).not.toBe(before);
  const tokens = await rp.exchange(callbackParams(other.page.url()).code!, verifier);
  const claims = await rp.verifyIdToken(tokens.id_token as string);
  expect(claims.amr).toEqual(["hwk", "mfa"]);
  expect(claims.acr).toBe("urn:torii:acr:mfa");

  // Passwordless through the login name field's autofill (conditional UI): the device answers it.
  const auto = await newPage(browser);
  const onAuto = await onOther.moveTo(auto.page);
  await auto.page.goto(rp.authorizeUrl({}));
  await auto.page.waitForURL(rp.redirectUri + "**");
  expect(callbackParams(auto.page.url()).code).toBeTruthy();

  // Signing in again (max_age=0): the password page offers the passkey as well. Times are whole
  // seconds (auth_time): a request made in the second of the last sign-in is already satisfied.
  await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));
  const again = RelyingParty.pkce();
  await auto.page.goto(rp.authorizeUrl({ max_age: "0", code_challenge: again.challenge, code_challenge_method: "S256" }));
  await expect(auto.page.getByTestId("login-name")).toContainText(name);
  await auto.page.screenshot({ path: `${SHOTS}/passkey-password-page.png`, fullPage: true });
  const signedInBefore = Math.floor(Date.now() / 1000);
  await auto.page.getByRole("button", { name: "Sign in with a passkey" }).click();
  await auto.page.waitForURL(rp.redirectUri + "**");
  const reauthenticated = await rp.verifyIdToken((await rp.exchange(callbackParams(auto.page.url()).code!, again.verifier)).id_token as string);
  expect(reauthenticated.amr).toEqual(["hwk", "mfa"]);
  expect(reauthenticated.auth_time).toBeGreaterThanOrEqual(signedInBefore);

  // As the second step: a third browser signs in with the password, then the passkey.
  const third = await newPage(browser);
  await third.page.goto(rp.authorizeUrl({}));
  await signIn(third.page, name);
  await expect(third.page.getByRole("heading", { level: 1 })).toHaveText("Two-step verification");
  await onAuto.moveTo(third.page);
  await third.page.screenshot({ path: `${SHOTS}/passkey-second-step.png`, fullPage: true });
  await third.page.getByRole("button", { name: "Use a passkey" }).click();
  await third.page.waitForURL(rp.redirectUri + "**");
  expect(callbackParams(third.page.url()).code).toBeTruthy();

  // A browser without the passkey: the second step offers it, but the authenticator has none; a recovery code works.
  const fourth = await newPage(browser);
  await fourth.page.goto(rp.authorizeUrl({}));
  await signIn(fourth.page, name);
  await virtualAuthenticator(fourth.page);
  await fourth.page.getByRole("button", { name: "Use a passkey" }).click();
  await expect(fourth.page.locator(".passkey-form [role=alert]")).toContainText("could not be used");

  // The administrator sees the passkey.
  const factors = await (await fetch(`${BASE_URL}/management/v1/users/${(await (await fetch(`${BASE_URL}/management/v1/users?search=${name}`, { headers: { authorization: `Bearer ${process.env.E2E_ADMIN_PAT ?? "torii_pat_e2e_0123456789abcdef0123456789abcdef"}` } })).json()).users[0].id}/factors`, { headers: { authorization: `Bearer ${process.env.E2E_ADMIN_PAT ?? "torii_pat_e2e_0123456789abcdef0123456789abcdef"}` } })).json();
  expect(factors.factors).toMatchObject([{ type: "webauthn", name: "Laptop" }]);
  await Promise.all([ctx.close(), other.ctx.close(), auto.ctx.close(), third.ctx.close(), fourth.ctx.close()]);
});

test("a required second factor can be a passkey made during the sign-in", async ({ browser }) => {
  const name = uniqueName("pkreq");
  await createUser(name, PASSWORD);
  const pat = process.env.E2E_ADMIN_PAT ?? "torii_pat_e2e_0123456789abcdef0123456789abcdef";
  const settings = (mfa: string) => fetch(`${BASE_URL}/management/v1/settings`, { method: "PUT", headers: { authorization: `Bearer ${pat}`, "content-type": "application/json" }, body: JSON.stringify({ mfa }) });
  expect((await settings("required")).status).toBe(200);
  try {
    const { ctx, page } = await newPage(browser);
    const { verifier, challenge } = RelyingParty.pkce();
    await page.goto(rp.authorizeUrl({ code_challenge: challenge, code_challenge_method: "S256" }));
    await signIn(page, name);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Set up two-step verification");
    await virtualAuthenticator(page);
    await page.getByRole("button", { name: "Use a passkey instead" }).click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Save your recovery codes");
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(rp.redirectUri + "**");
    const tokens = await rp.exchange(callbackParams(page.url()).code!, verifier);
    expect((await rp.verifyIdToken(tokens.id_token as string)).amr).toEqual(["pwd", "hwk", "mfa"]);
    await ctx.close();
  } finally {
    await settings("optional");
  }
});
