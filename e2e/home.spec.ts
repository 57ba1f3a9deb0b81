import { expect, test } from "@playwright/test";

test("the landing page renders in the browser's language and links to discovery", async ({ browser }) => {
  const context = await browser.newContext({ locale: "de-DE" });
  const page = await context.newPage();
  await page.goto("/");
  await expect(page.locator("html")).toHaveAttribute("lang", "de");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Identitätsanbieter");
  await page.getByRole("link", { name: /Discovery/ }).click();
  const doc = JSON.parse((await page.locator("body").textContent()) ?? "{}");
  expect(doc.issuer).toBe(new URL(page.url()).origin);
  await context.close();
});

test("pages cannot be framed", async ({ request }) => {
  const res = await request.get("/");
  expect(res.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
  expect(res.headers()["x-frame-options"]).toBe("DENY");
});
