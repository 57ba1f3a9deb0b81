// An address that names nothing, and a console page of something that is gone, answer 404 with a
// page in the browser's language and the brand's look (app/not-found.tsx), not Next's English
// default; its link leads on to the account page.
import fs from "node:fs";
import { expect, test } from "@playwright/test";
import { CONSOLE, consoleSession, createAdmin, expectOneH1 } from "./console-helpers";
import { SHOTS } from "./support";

const texts = (lang: string) => (JSON.parse(fs.readFileSync(`messages/${lang}.json`, "utf8")) as { notFound: Record<"title" | "lead" | "account", string> }).notFound;

test("an address that names nothing: 404, a page in the browser's language, a way on to the account", async ({ browser }) => {
  for (const [lang, locale] of [["en", "en-US"], ["de", "de-DE"], ["fr", "fr-FR"], ["it", "it-IT"]] as const) {
    const t = texts(lang);
    const context = await browser.newContext({ locale });
    const page = await context.newPage();
    const res = await page.goto("/ui/no-such-page");
    expect(res?.status()).toBe(404);
    await expect(page.locator("html")).toHaveAttribute("lang", lang);
    await expectOneH1(page, t.title);
    await expect(page.locator(".auth-card")).toContainText(t.lead);
    await expect(page.locator("body")).not.toContainText("could not be found");
    await page.screenshot({ path: `${SHOTS}/not-found-${lang}.png` });
    // The account page asks a visitor who is not signed in to sign in.
    await page.getByRole("link", { name: t.account }).click();
    await expect(page.locator('input[name="loginName"]')).toBeVisible();
    await context.close();
  }
});

test("a console page of a user that does not exist: the same page, 404", async ({ browser }) => {
  const admin = await createAdmin("notfound");
  const { context, page } = await consoleSession(browser, admin.name, { locale: "fr-FR" });
  const res = await page.goto(`${CONSOLE}/users/000000000000000000`);
  expect(res?.status()).toBe(404);
  await expectOneH1(page, texts("fr").title);
  await context.close();
});
