// A page load asks for nothing that is not there: every response of these page loads (documents,
// scripts, styles, images, the icon) is checked, and the icon the layout links is served.
import { expect, test, type Page, type Request, type Response } from "@playwright/test";
import { CONSOLE, consoleSession, createAdmin } from "./console-helpers";
import { BASE_URL } from "./support";

function recordFailures(page: Page): string[] {
  const failed: string[] = [];
  page.on("response", (r: Response) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
  });
  page.on("requestfailed", (r) => failed.push(`failed ${r.url()} ${r.failure()?.errorText}`));
  return failed;
}

/** How long a page may keep loading after its load event before the test names what it waits for. */
const SETTLE_MS = 20_000;

async function load(page: Page, url: string): Promise<void> {
  const pending = new Set<Request>();
  const started = (r: Request) => pending.add(r);
  const ended = (r: Request) => pending.delete(r);
  page.on("request", started);
  page.on("requestfinished", ended);
  page.on("requestfailed", ended);
  try {
    await page.goto(url);
    await page.waitForLoadState("networkidle", { timeout: SETTLE_MS });
  } catch (err) {
    // A request that never ends is a defect of the server (or the page): say which one.
    const waiting = [...pending].map((r) => `${r.method()} ${r.url()} (${r.resourceType()})`);
    throw new Error(`${url}: still loading after ${SETTLE_MS} ms: ${waiting.join(", ") || "no request pending"}`, { cause: err });
  } finally {
    page.off("request", started);
    page.off("requestfinished", ended);
    page.off("requestfailed", ended);
  }
  // The icon the page declares, fetched as the browser would (headless Chromium does not always ask).
  const icon = await page.locator('link[rel="icon"]').first().getAttribute("href");
  expect(icon, `an icon on ${url}`).toBeTruthy();
  const res = await page.request.get(new URL(icon!, BASE_URL).href);
  expect(res.status(), `icon of ${url}`).toBe(200);
  expect(res.headers()["content-type"]).toMatch(/^image\//);
}

test("the home page and the hosted login: no 4xx, an icon", async ({ page }) => {
  const failed = recordFailures(page);
  await load(page, "/");
  await load(page, "/ui/console"); // -> the login page
  await expect(page.locator('input[name="loginName"]')).toBeVisible();
  await load(page, "/ui/login/signedout");
  expect(failed).toEqual([]);
  const fav = await page.request.get("/favicon.ico");
  expect(fav.status()).toBe(200);
});

test("the console pages: no 4xx, an icon", async ({ browser }) => {
  const admin = await createAdmin("noerrors");
  const { context, page } = await consoleSession(browser, admin.name);
  const failed = recordFailures(page);
  for (const p of ["", "/applications", "/applications/new", "/users", "/users/new", `/users/${admin.id}`, "/features", "/keys", "/branding", "/texts", "/settings", "/audit"]) {
    await load(page, CONSOLE + p);
  }
  expect(failed).toEqual([]);
  await context.close();
});
