import { expect, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { createUser } from "./rp";
import { PASSWORD, signIn, uniqueName } from "./login-helpers";
import { BASE_URL } from "./support";
export { SHOTS } from "./support";

export const CONSOLE = BASE_URL + "/ui/console";

/** A fresh administrator (role admin, known password) made through the management API. */
export async function createAdmin(prefix = "consoleadmin"): Promise<{ id: string; name: string }> {
  const name = uniqueName(prefix);
  const { id } = await createUser(name, PASSWORD, { roles: ["admin"], givenName: "Ada", familyName: "Admin" });
  return { id, name };
}

/** Opens the console in a new browser context and signs in through the hosted login. */
export async function consoleSession(browser: Browser, loginName: string, opts: { locale?: string; width?: number; javaScriptEnabled?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    javaScriptEnabled: opts.javaScriptEnabled ?? true,
    locale: opts.locale ?? "en-US",
    viewport: { width: opts.width ?? 1280, height: 860 },
    extraHTTPHeaders: { "Accept-Language": opts.locale ?? "en-US" },
  });
  const page = await context.newPage();
  await page.goto(CONSOLE);
  await signIn(page, loginName);
  await page.waitForURL((u) => u.pathname.startsWith("/ui/console") && !u.pathname.startsWith("/ui/console/callback"));
  return { context, page };
}

export async function expectOneH1(page: Page, text?: string | RegExp): Promise<void> {
  await expect(page.locator("h1")).toHaveCount(1);
  if (text) await expect(page.locator("h1")).toHaveText(text);
}
