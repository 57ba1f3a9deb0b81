import fs from "node:fs";
import { expect, test, type Browser } from "@playwright/test";
import pg from "pg";
import { createUser, RelyingParty } from "./rp";
import { CONSOLE, consoleSession, createAdmin, expectOneH1 } from "./console-helpers";
import { callbackParams, PASSWORD, signIn, uniqueName } from "./login-helpers";
import { adminApi, E2E_DATABASE_FILE } from "./support";

/**
 * "Choose a new password" during sign-in (lib/login/signin-policy.ts `password_expired`): an
 * administrator requires it on the console's user page, or the password is older than the
 * settings' maximum age. The page works without JavaScript; only after it is a code issued.
 */

let rp: RelyingParty;
test.beforeAll(async () => {
  rp = await RelyingParty.start();
});
test.afterAll(() => rp.stop());

const NEW_PASSWORD = "Brand-New-Passphrase-7";

/** Signs in without JavaScript and goes through the change page, trying its refusals first. */
async function signInAndChange(browser: Browser, name: string, userId: string, lead: string) {
  const ctx = await browser.newContext({ javaScriptEnabled: false, locale: "en-US", extraHTTPHeaders: { "Accept-Language": "en-US" } });
  const page = await ctx.newPage();
  const received = rp.received.length;
  await page.goto(rp.authorizeUrl({ state: "pc" }));
  await signIn(page, name);
  await expect(page).toHaveURL(/\/ui\/login\/password\/change\?/);
  await expectOneH1(page, "Choose a new password");
  await expect(page.getByText(lead)).toBeVisible();
  const fresh = page.getByLabel("New password", { exact: true });
  const again = page.getByLabel("Repeat the new password");
  const submit = page.getByRole("button", { name: "Change password and continue" });

  await fresh.fill(NEW_PASSWORD);
  await again.fill("Something-Else-1234");
  await submit.click();
  await expect(page.locator("#form-error")).toHaveText("The passwords do not match.");
  await fresh.fill(PASSWORD);
  await again.fill(PASSWORD);
  await submit.click();
  await expect(page.locator("#form-error")).toHaveText("The new password must be different from your current one.");
  await fresh.fill("short");
  await again.fill("short");
  await submit.click();
  await expect(page.locator("#form-error")).toHaveText("The password does not meet the requirements: at least 10 characters.");
  // Nothing reached the application yet.
  expect(rp.received.length).toBe(received);

  await fresh.fill(NEW_PASSWORD);
  await again.fill(NEW_PASSWORD);
  await submit.click();
  await page.waitForURL(rp.redirectUri + "**");
  const p = callbackParams(page.url());
  expect(p.state).toBe("pc");
  const tokens = await rp.exchange(p.code!);
  expect((await rp.verifyIdToken(tokens.id_token as string)).sub).toBe(userId);
  await ctx.close();

  // The new password is the one now, and nothing more is asked.
  const next = await browser.newContext();
  const np = await next.newPage();
  await np.goto(rp.authorizeUrl({ state: "pc2" }));
  await signIn(np, name, NEW_PASSWORD);
  await np.waitForURL(rp.redirectUri + "**");
  expect(callbackParams(np.url()).code).toBeTruthy();
  await next.close();
}

test("an administrator requires a new password on the console; the user must choose one before the code is issued", async ({ browser }) => {
  const admin = await createAdmin();
  const name = uniqueName("pwchange");
  const { id } = await createUser(name, PASSWORD);
  const { context, page } = await consoleSession(browser, admin.name);
  await page.goto(`${CONSOLE}/users/${id}`);
  await expect(page.getByTestId("password-change-state")).toHaveText("The user keeps the password until they change it (or it expires under the password policy).");
  await page.getByRole("button", { name: "Require a new password" }).click();
  await expect(page.getByTestId("password-change-state")).toHaveText("The user must choose a new password at the next sign-in with the password.");
  expect((await (await adminApi(`/users/${id}`)).json()).passwordChangeRequired).toBe(true);
  await context.close();

  await signInAndChange(browser, name, id, "Your administrator asks you to choose a new password before you continue.");
  expect((await (await adminApi(`/users/${id}`)).json()).passwordChangeRequired).toBe(false);
});

test("a password older than the settings' maximum age asks for a new one", async ({ browser }) => {
  // The age counts from the stored time of the password, which only the database can move back.
  const databaseUrl = fs.existsSync(E2E_DATABASE_FILE) ? fs.readFileSync(E2E_DATABASE_FILE, "utf8").trim() : "";
  test.skip(!databaseUrl, "needs the PostgreSQL run (npm test runs the browser tests on both databases)");
  const admin = await createAdmin();
  const name = uniqueName("pwexpired");
  const { id } = await createUser(name, PASSWORD);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query("UPDATE password_credentials SET changed_at = now() - interval '40 days' WHERE user_id = $1", [id]);
  } finally {
    await db.end();
  }
  // The maximum age is set on the console's settings page.
  const { context, page } = await consoleSession(browser, admin.name);
  await page.goto(`${CONSOLE}/settings`);
  await page.getByLabel("Maximum age (days)").fill("30");
  await page.getByRole("button", { name: "Save settings" }).click();
  await expect(page.getByRole("status").first()).toHaveText("Saved.");
  await context.close();
  try {
    expect((await (await adminApi("/settings")).json()).passwordPolicy.maxAgeDays).toBe(30);
    await signInAndChange(browser, name, id, "Your password has expired. Choose a new one to continue.");
  } finally {
    await adminApi("/settings", { method: "PUT", json: { passwordPolicy: { maxAgeDays: 0 } } });
  }
});
