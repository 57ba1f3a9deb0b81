import { expect, type Page } from "@playwright/test";

export const PASSWORD = "Correct-Horse-42";

let counter = 0;
/** A username unique to this run, so tests never collide on the shared instance. */
export function uniqueName(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${(counter++).toString(36)}`;
}

/** The two-step sign-in as a user does it: login name, continue, password, sign in. */
export async function signIn(page: Page, loginName: string, password = PASSWORD): Promise<void> {
  await enterLoginName(page, loginName);
  await enterPassword(page, password);
}

export async function enterLoginName(page: Page, loginName: string): Promise<void> {
  await expect(page.locator('input[name="loginName"]')).toBeVisible();
  await page.locator('input[name="loginName"]').fill(loginName);
  await page.locator('button[type="submit"]').click();
}

export async function enterPassword(page: Page, password = PASSWORD): Promise<void> {
  await expect(page.locator('input[name="password"]')).toBeVisible();
  await page.locator('input[name="password"]').fill(password);
  await page.locator('button[type="submit"]').click();
}

/** The parameters the relying party received, from the query or the fragment of its callback URL. */
export function callbackParams(url: string): Record<string, string> {
  const u = new URL(url);
  return Object.fromEntries(u.hash ? new URLSearchParams(u.hash.slice(1)) : u.searchParams);
}
