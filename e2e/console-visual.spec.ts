// Visual check of every console page in every language, on a desktop (1280 px) and a phone
// (390 px): each is compared with its reviewed image in console-visual.spec.ts-snapshots/.
// What changes from run to run (ids, times, names made by the tests, table rows that other tests
// add) is masked, so a difference is a change of layout or text. After an intended change:
// `npx playwright test e2e/console-visual.spec.ts --update-snapshots`, then look at the images.
import { expect, test, type Page } from "@playwright/test";
import { CONSOLE, consoleSession } from "./console-helpers";
import { PASSWORD } from "./login-helpers";
import { createUser } from "./rp";
import { adminApi } from "./support";

const LOCALES = ["en", "de", "fr", "it"] as const;
const WIDTHS = { desktop: 1280, phone: 390 } as const;
const PAGES = [
  ["overview", ""],
  // Lists are filtered to rows that exist in every run, whatever other specs created before:
  // the check's own application and administrator, the bootstrap event.
  ["applications", "/applications?q=visual-check-app"],
  ["application-detail", "/applications/{app}"],
  ["application-new", "/applications/new"],
  ["apis", "/apis"],
  ["api-detail", "/apis/{api}"],
  ["api-new", "/apis/new"],
  ["users", "/users?q=visualadmin"],
  ["user-detail", "/users/{admin}"],
  ["user-new", "/users/new"],
  ["features", "/features"],
  ["keys", "/keys"],
  ["branding", "/branding"],
  ["texts", "/texts"],
  ["settings", "/settings"],
  ["audit", "/audit?action=instance.bootstrapped"],
  // The mails to an address nobody writes to: the same (empty) list whatever other specs sent.
  ["outbox", "/outbox?q=nobody%40visual.example"],
] as const;

function masks(page: Page) {
  return [
    page.locator("main table tbody"),
    page.locator("main time"),
    page.locator("main code.id"),
    page.locator(".pager .muted"),
    page.locator(".console-user"),
    page.locator(".stat-value"),
    page.locator(".event-list"), // recent events name the users other tests made
    page.locator('main input[type="file"]'), // drawn by the browser itself, different in each Chromium version
  ];
}

let admin: { id: string; name: string };
let appId: string;
let apiId: string;
test.beforeAll(async () => {
  // The default look, whatever an earlier test left.
  await adminApi("/branding", { method: "PUT", json: { productName: "Torii", primaryColor: "#c2410c", backgroundColor: "#fafaf9", darkMode: "light", logo: null } });
  // A fixed name, because the overview greets the administrator by it (each run has a fresh server).
  const name = "visualadmin";
  // beforeAll runs again in a new worker after a failure: the user may exist already.
  const existing = (await (await adminApi(`/users?search=${name}`)).json()) as { users: { id: string; username: string }[] };
  const found = existing.users.find((u) => u.username === name);
  const { id } = found ?? (await createUser(name, PASSWORD, { roles: ["admin"], givenName: "Ada", familyName: "Admin" }));
  admin = { id, name };
  const apps = (await (await adminApi("/clients")).json()) as { clients: { clientId: string; name: string }[] };
  appId =
    apps.clients.find((c) => c.name === "visual-check-app")?.clientId ??
    ((await (await adminApi("/clients", { json: { name: "visual-check-app", redirectUris: ["https://visual.example/cb"] } })).json()) as { clientId: string }).clientId;
  // The check's own API (other specs delete theirs): the API pages, and its sections on the
  // application and user pages.
  const apis = (await (await adminApi("/apis")).json()) as { apis: { apiId: string; name: string }[] };
  apiId =
    apis.apis.find((a) => a.name === "visual-check-api")?.apiId ??
    (
      (await (
        await adminApi("/apis", {
          json: {
            identifier: "https://visual.example/api",
            name: "visual-check-api",
            scopes: [{ name: "orders:read", description: "Read orders" }],
            roles: [
              { key: "viewer", name: "Viewer" },
              { key: "admin", name: "Administrator", description: "Everything" },
            ],
          },
        })
      ).json()) as { apiId: string }
    ).apiId;
});
test.afterAll(async () => {
  await adminApi("/branding", { method: "PUT", json: { darkMode: "auto" } });
});

for (const locale of LOCALES) {
  test(`console pages in ${locale} at 1280 and 390 px`, async ({ browser }) => {
    test.setTimeout(240_000);
    const { context, page } = await consoleSession(browser, admin.name, { locale });
    for (const [name, path] of PAGES) {
      for (const [device, width] of Object.entries(WIDTHS)) {
        await page.setViewportSize({ width, height: 900 });
        // The load event (goto's default) has every image and stylesheet; toHaveScreenshot waits
        // for the fonts and for two screenshots in a row to agree. Not "networkidle": once on
        // PostgreSQL it never came for a page whose every request had been answered in the trace.
        await page.goto(CONSOLE + path.replace("{admin}", admin.id).replace("{app}", appId).replace("{api}", apiId));
        // What the masks hide may take more or less room from run to run (a key id that wraps
        // differently, longer event sentences after other specs): fixed boxes keep the layout
        // around them comparable.
        await page.addStyleTag({ content: ".stat-value { height: 3.5rem; overflow: hidden } .event-list { height: 14rem; overflow: hidden }" });
        await expect(page).toHaveScreenshot(`${name}-${locale}-${device}.png`, { fullPage: false, mask: masks(page), animations: "disabled", maxDiffPixelRatio: 0.002 });
      }
    }
    await context.close();
  });
}

test("the active navigation item stays readable with a light primary colour", async ({ browser }) => {
  await adminApi("/branding", { method: "PUT", json: { primaryColor: "#fde047" } });
  try {
    const { context, page } = await consoleSession(browser, admin.name);
    await page.goto(CONSOLE + "/settings");
    const active = page.locator('.nav-link[aria-current="page"]');
    await expect(active).toHaveText("Settings");
    // The brand colour behind the brand's contrast colour (dark on yellow).
    await expect(active).toHaveCSS("background-color", "rgb(253, 224, 71)");
    await expect(active).toHaveCSS("color", "rgb(28, 25, 23)");
    await context.close();
  } finally {
    await adminApi("/branding", { method: "PUT", json: { primaryColor: "#c2410c" } });
  }
});
