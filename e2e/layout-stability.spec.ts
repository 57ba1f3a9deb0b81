import { expect, test, type Page } from "@playwright/test";
import { createUser, RelyingParty } from "./rp";
import { enterLoginName, PASSWORD, uniqueName } from "./login-helpers";

/**
 * The login pages do not move when their script takes over. The passkey button is drawn by the
 * browser's script (only it knows whether WebAuthn is there); had it appeared only then, the
 * centred card would jump by its height under a pointer already on "Continue" or "Sign in", and a
 * quick click would land beside the button and do nothing.
 */

let rp: RelyingParty;
let name: string;
test.beforeAll(async () => {
  rp = await RelyingParty.start();
  name = uniqueName("steady");
  await createUser(name, PASSWORD);
});
test.afterAll(() => rp.stop());

/** A layout shift as the browser reports it, with the start of each element it moved. */
type Shift = { value: number; nodes: string[] };
type Recorded = { shifts: Shift[]; parsedAt?: number };

/**
 * Records every layout shift of the page once its HTML is parsed (Layout Instability API). Shifts
 * before that are the browser painting a page whose HTML is still arriving (on a busy machine it
 * paints the card's first lines, and the centred card moves up as the rest comes in); they are
 * not what the page's script does, which starts after it.
 */
async function recordShifts(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as Recorded;
    w.shifts = [];
    document.addEventListener("DOMContentLoaded", () => (w.parsedAt = performance.now()));
    new PerformanceObserver((list) => {
      for (const e of list.getEntries() as unknown as { value: number; startTime: number; sources?: { node?: Node | null }[] }[]) {
        if (w.parsedAt === undefined || e.startTime < w.parsedAt) continue;
        w.shifts.push({ value: e.value, nodes: (e.sources ?? []).map((s) => (s.node instanceof Element ? s.node.outerHTML.slice(0, 60) : String(s.node?.nodeName))) });
      }
    }).observe({ type: "layout-shift", buffered: true });
  });
}

/** The shifts recorded since the HTML was parsed, once the page's script has run (its passkey button is shown). */
async function shiftsAfterHydration(page: Page): Promise<Shift[]> {
  await expect(page.locator(".passkey-form button")).toBeVisible();
  // Two frames, so that the observer has been told of the last layout.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const { shifts, parsedAt } = await page.evaluate(() => {
    const w = window as unknown as Recorded;
    return { shifts: w.shifts, parsedAt: w.parsedAt };
  });
  expect(parsedAt, "DOMContentLoaded was seen").toBeDefined();
  return shifts;
}

test("the login name and password pages keep their place when the passkey button appears", async ({ page }) => {
  await recordShifts(page);
  await page.goto(rp.authorizeUrl({}));
  await expect(page.locator('input[name="loginName"]')).toBeVisible();
  expect(await shiftsAfterHydration(page)).toEqual([]);

  await enterLoginName(page, name);
  await expect(page.locator('input[name="password"]')).toBeVisible();
  expect(await shiftsAfterHydration(page)).toEqual([]);
});

test("without a script the passkey button is not drawn, nor its place kept", async ({ browser }) => {
  const ctx = await browser.newContext({ javaScriptEnabled: false });
  const page = await ctx.newPage();
  await page.goto(rp.authorizeUrl({}));
  const form = page.locator(".passkey-form");
  await expect(form).toHaveCount(1);
  expect(await form.evaluate((f) => getComputedStyle(f).display)).toBe("none");
  await ctx.close();
});
