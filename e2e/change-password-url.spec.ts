// What a password manager's "change password" does: open /.well-known/change-password, which
// leads to the account page's password section (after a sign-in when there is no session).
import { expect, test } from "@playwright/test";
import { createUser } from "./rp";
import { PASSWORD, signIn, uniqueName } from "./login-helpers";
import { BASE_URL } from "./support";

test("/.well-known/change-password: a sign-in, then the account page; signed in, its password section", async ({ browser }) => {
  const name = uniqueName("chpw");
  await createUser(name, PASSWORD);
  const context = await browser.newContext({ locale: "en" });
  const page = await context.newPage();

  await page.goto("/.well-known/change-password");
  await signIn(page, name);
  await page.waitForURL(`${BASE_URL}/ui/account`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Your account");

  // With the session: straight to the section, scrolled into view, its fields ready.
  await page.goto("/.well-known/change-password");
  await page.waitForURL(`${BASE_URL}/ui/account#password`);
  await expect(page.locator("#password")).toBeInViewport();
  await expect(page.locator("#password input[type=password]").first()).toBeVisible();
  await context.close();
});
