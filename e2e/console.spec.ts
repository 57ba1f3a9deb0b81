import { decodeJwt } from "jose";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test, type Page, type Request } from "@playwright/test";
import { createUser, RelyingParty } from "./rp";
import { callbackParams, PASSWORD, uniqueName } from "./login-helpers";
import { adminApi, BASE_URL } from "./support";
import { startSmtpSink } from "../test/smtp-sink";
import { CONSOLE, consoleSession, createAdmin, expectOneH1, SHOTS } from "./console-helpers";

let admin: { id: string; name: string };
const LOGO = '<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24"><rect width="24" height="24" rx="6" fill="#0f766e"/></svg>';

test.beforeAll(async () => {
  admin = await createAdmin();
});

async function shot(page: Page, name: string, fullPage = true) {
  // From the top, so that the sticky sidebar is where a visitor first sees it.
  await page.evaluate(() => { window.scrollTo(0, 0); });
  await page.screenshot({ path: `${SHOTS}/console-${name}.png`, fullPage });
}

test("applications: create with inline errors, secret once, use it in a code flow, edit, search, delete", async ({ browser }) => {
  const { context, page } = await consoleSession(browser, admin.name);
  await expectOneH1(page, "Overview");
  await shot(page, "overview-en-desktop");

  await page.getByRole("navigation", { name: "Console sections" }).getByRole("link", { name: "Applications" }).click();
  await expectOneH1(page, "Applications");
  if (await page.getByText("No applications yet").isVisible()) await shot(page, "applications-empty-en-desktop");
  await page.getByRole("link", { name: "New application" }).first().click();
  await expectOneH1(page, "New application");

  // Form fields carry the management API's field names.
  for (const name of ["name", "redirectUris", "postLogoutRedirectUris", "responseTypes", "grantTypes", "authMethod", "jwks", "accessTokenType", "idTokenUserinfoAssertion", "accessTokenLifetime", "idTokenLifetime", "refreshTokenLifetime"]) {
    await expect(page.locator(`[name="${name}"]`).first()).toBeAttached();
  }

  // The API's field errors appear next to their inputs, and what was typed stays.
  const appName = uniqueName("Shop ");
  await page.locator('[name="name"]').fill(appName);
  await page.locator('[name="redirectUris"]').fill("https://shop.example.com/cb#frag");
  await page.locator('[name="accessTokenLifetime"]').fill("0");
  await page.getByRole("button", { name: "Create application" }).click();
  await expect(page.locator(".alert-error")).toContainText("Please correct the marked fields.");
  await expect(page.locator("#redirectUris-error")).toHaveText("The URI must not contain a fragment (#). (line 1)");
  await expect(page.locator("#accessTokenLifetime-error")).toHaveText("Must be at least 1.");
  await expect(page.locator('[name="redirectUris"]')).toHaveAttribute("aria-invalid", "true");
  await expect(page.locator('[name="name"]')).toHaveValue(appName);
  await shot(page, "application-new-errors-en-desktop");

  // A real listener for the redirect URI (a route handler would not see the server's redirect).
  const cb = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<h1>callback</h1>"));
  await new Promise<void>((r) => cb.listen(0, "127.0.0.1", r));
  const redirectUri = `http://localhost:${(cb.address() as AddressInfo).port}/console-cb`;
  await page.locator('[name="redirectUris"]').fill(redirectUri);
  await page.locator('[name="accessTokenLifetime"]').fill("");
  await page.getByRole("button", { name: "Create application" }).click();
  await expect(page.getByRole("status").first()).toContainText(`Application ${appName} was created.`);
  const secret = (await page.getByTestId("secret-value").textContent())!.trim();
  expect(secret.length).toBeGreaterThan(30);
  await shot(page, "application-created-en-desktop");
  // The copy button puts exactly the secret on the clipboard.
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: BASE_URL });
  await page.getByRole("button", { name: "Copy" }).click();
  await expect(page.getByRole("button", { name: "Copied" })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);

  await page.getByRole("link", { name: "Open the application" }).click();
  await expectOneH1(page, appName);
  const clientId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
  // Never shown again.
  await expect(page.getByText(secret)).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId("secret-value")).toHaveCount(0);
  await shot(page, "application-detail-en-desktop");

  // Use it: a code flow with PKCE through the hosted login (the console's session is reused).
  const { verifier, challenge } = RelyingParty.pkce();
  const q = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: "code", scope: "openid", state: "s1", code_challenge: challenge, code_challenge_method: "S256" });
  await page.goto(`${BASE_URL}/oauth/v2/authorize?${q}`);
  await page.waitForURL(redirectUri + "**");
  const code = callbackParams(page.url()).code!;
  const tokenRes = await fetch(BASE_URL + "/oauth/v2/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: "Basic " + Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64") },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier }),
  });
  expect(tokenRes.status).toBe(200);
  expect((await tokenRes.json()).id_token).toBeTruthy();
  cb.close();

  // Regenerate: a new secret shown once; the old one stops working.
  await page.goto(`${CONSOLE}/applications/${encodeURIComponent(clientId)}`);
  await page.getByRole("button", { name: "Regenerate secret" }).click();
  const secret2 = (await page.getByTestId("secret-value").textContent())!.trim();
  expect(secret2).not.toBe(secret);

  // Edit.
  await page.locator('[name="name"]').fill(appName + " v2");
  await page.getByRole("button", { name: "Save changes" }).click();
  await expect(page.getByRole("status").first()).toHaveText("Saved.");
  expect((await (await adminApi(`/clients/${encodeURIComponent(clientId)}`)).json()).name).toBe(appName + " v2");

  // List and search.
  await page.goto(`${CONSOLE}/applications`);
  await expect(page.getByRole("link", { name: appName + " v2" })).toBeVisible();
  await shot(page, "applications-en-desktop");
  await page.getByRole("searchbox").fill("no-such-application");
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page.getByText("No application matches this search.")).toBeVisible();

  // Delete, with a confirmation step.
  await page.goto(`${CONSOLE}/applications/${encodeURIComponent(clientId)}`);
  await page.getByText("Delete application…").click();
  await expect(page.getByText(`Delete ${appName} v2 and revoke its tokens?`)).toBeVisible();
  await page.getByRole("button", { name: "Yes, delete" }).click();
  await page.waitForURL(/\/ui\/console\/applications\?deleted=1/);
  await expect(page.getByText("The application was deleted.")).toBeVisible();
  expect((await adminApi(`/clients/${encodeURIComponent(clientId)}`)).status).toBe(404);

  // Phone width.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${CONSOLE}/applications/new`);
  await shot(page, "application-new-en-phone");
  await context.close();
});

test("users: create human and machine users, lock, roles, password, keys and tokens", async ({ browser }) => {
  const { context, page } = await consoleSession(browser, admin.name);
  await page.goto(`${CONSOLE}/users/new`);
  await expectOneH1(page, "New user");
  const username = uniqueName("carol");
  await page.locator('[name="username"]').fill(username);
  await page.locator('[name="email"]').fill("not-an-email");
  await page.locator('[name="givenName"]').fill("Carol");
  await page.locator('[name="familyName"]').fill("Jones");
  await page.locator('[name="password"]').fill("short");
  await page.getByRole("button", { name: "Create user" }).click();
  await expect(page.locator("#email-error")).toBeVisible();
  await page.locator('[name="email"]').fill(`${username}@example.com`);
  await page.locator('[name="password"]').fill(PASSWORD);
  await page.getByRole("button", { name: "Create user" }).click();
  await expect(page.getByRole("status").first()).toContainText(`User ${username} was created.`);
  await page.getByRole("link", { name: "Open the user" }).click();
  await expectOneH1(page, username);
  const userId = new URL(page.url()).pathname.split("/").pop()!;

  // Roles: grant administrator and impersonation.
  await page.locator("#section-access").getByLabel("Administrator").check();
  await page.locator("#section-access").getByLabel("Impersonation").check();
  await page.getByRole("button", { name: "Save roles" }).click();
  await expect(page.locator("#section-access").getByRole("status")).toHaveText("Saved.");
  expect((await (await adminApi(`/users/${userId}`)).json()).roles.sort()).toEqual(["admin", "impersonation"]);
  await page.reload();
  await page.locator("#section-access").getByLabel("Administrator").uncheck();
  await page.getByRole("button", { name: "Save roles" }).click();
  await expect(page.locator("#section-access").getByRole("status")).toHaveText("Saved.");
  expect((await (await adminApi(`/users/${userId}`)).json()).roles).toEqual(["impersonation"]);

  // Lock and unlock.
  await page.getByRole("button", { name: "Lock user" }).click();
  await expect(page.getByRole("button", { name: "Unlock user" })).toBeVisible();
  expect((await (await adminApi(`/users/${userId}`)).json()).locked).toBe(true);
  await page.getByRole("button", { name: "Unlock user" }).click();
  await expect(page.getByRole("button", { name: "Lock user" })).toBeVisible();

  // Password, checked by the policy.
  await page.locator("input#password").fill("x");
  await page.getByRole("button", { name: "Set password" }).click();
  await expect(page.locator("#password-error")).toBeVisible();
  await page.locator("input#password").fill("Another-Pass-42");
  await page.getByRole("button", { name: "Set password" }).click();
  await expect(page.getByText("The password was set.")).toBeVisible();

  // Edit the profile.
  await page.locator('[name="nickname"]').fill("CJ");
  await page.getByRole("button", { name: "Save profile" }).click();
  // The profile's own status: the roles section above still says "Saved." from before.
  await expect(page.locator("#section-profile").getByRole("status")).toHaveText("Saved.");
  expect((await (await adminApi(`/users/${userId}`)).json()).nickname).toBe("CJ");
  await shot(page, "user-detail-en-desktop");

  // A machine user: generate a key pair (private key offered once), and a PAT.
  await page.goto(`${CONSOLE}/users/new?type=machine`);
  await expectOneH1(page, "New machine user");
  const bot = uniqueName("bot");
  await page.locator('[name="username"]').fill(bot);
  await page.locator('[name="name"]').fill("Build robot");
  await page.getByRole("button", { name: "Create user" }).click();
  await page.getByRole("link", { name: "Open the user" }).click();
  await page.getByRole("button", { name: "Generate key pair" }).click();
  await expect(page.getByRole("link", { name: "Download" })).toBeVisible();
  const privateKey = JSON.parse((await page.getByTestId("secret-value").textContent())!);
  expect(privateKey.d).toBeTruthy();
  await shot(page, "machine-key-generated-en-desktop");
  await page.reload();
  await expect(page.locator("#section-keys table tbody tr")).toHaveCount(1);
  await expect(page.getByTestId("secret-value")).toHaveCount(0);

  await page.getByRole("button", { name: "Create token" }).click();
  const pat = (await page.getByTestId("secret-value").textContent())!.trim();
  expect(pat.length).toBeGreaterThan(20);
  await page.reload();
  await expect(page.locator("#section-pats table tbody tr")).toHaveCount(1);
  await shot(page, "machine-user-en-desktop");

  // List with search.
  await page.goto(`${CONSOLE}/users?q=${encodeURIComponent(username)}`);
  await expect(page.getByRole("link", { name: username })).toBeVisible();
  await expect(page.getByRole("link", { name: bot })).toHaveCount(0);
  await page.goto(`${CONSOLE}/users`);
  await shot(page, "users-en-desktop");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "users-en-phone");
  await context.close();
});

test("features: toggles save at once and the token endpoint follows", async ({ browser }) => {
  const { context, page } = await consoleSession(browser, admin.name);
  await page.goto(`${CONSOLE}/features`);
  await expectOneH1(page, "Features");
  // The switches save through server actions, which carry the router's state header: the
  // server's screen of that header (a forged one is a 400) lets every real one through.
  const actions: { state: boolean; status: number }[] = [];
  page.on("response", (r) => {
    const h = r.request().headers();
    if (h["next-action"]) actions.push({ state: "next-router-state-tree" in h, status: r.status() });
  });
  const exchange = () =>
    fetch(BASE_URL + "/oauth/v2/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:token-exchange", subject_token: "x", subject_token_type: "urn:ietf:params:oauth:token-type:access_token" }),
    }).then((r) => r.json());
  expect((await exchange()).error).toBe("unsupported_grant_type");

  const toggle = page.getByRole("switch", { name: "Token exchange" });
  await expect(toggle).not.toBeChecked();
  await toggle.check();
  await expect(page.locator(".toggle-row").first().getByRole("status")).toHaveText("Saved");
  expect((await (await adminApi("/features")).json()).tokenExchange).toBe(true);
  expect((await exchange()).error).not.toBe("unsupported_grant_type");
  await shot(page, "features-en-desktop");

  await page.reload();
  await expect(page.getByRole("switch", { name: "Token exchange" })).toBeChecked();
  await page.getByRole("switch", { name: "Token exchange" }).uncheck();
  await expect(page.locator(".toggle-row").first().getByRole("status")).toHaveText("Saved");
  expect((await exchange()).error).toBe("unsupported_grant_type");
  expect(actions.length).toBeGreaterThanOrEqual(2);
  expect(actions).toEqual(actions.map(() => ({ state: true, status: 200 })));
  await context.close();
});

test("without JavaScript: a Save button submits a feature switch, and the other forms work", async ({ browser }) => {
  const { context, page } = await consoleSession(browser, admin.name, { javaScriptEnabled: false });
  await page.goto(`${CONSOLE}/features`);
  const row = page.locator(".toggle-row").filter({ has: page.getByRole("switch", { name: "Impersonation" }) });
  await row.getByRole("switch").check();
  await row.getByRole("button", { name: "Save" }).click();
  await expect.poll(async () => (await (await adminApi("/features")).json()).impersonation).toBe(true);
  await page.goto(`${CONSOLE}/features`);
  await expect(page.getByRole("switch", { name: "Impersonation" })).toBeChecked();
  expect((await adminApi("/features", { method: "PUT", json: { impersonation: false } })).status).toBe(200);

  // Any other console form too: a text override, with its validation message.
  await page.goto(`${CONSOLE}/texts?locale=it`);
  await page.locator('[name="texts.login.footer"]').fill("Protetto da {brand}");
  await page.getByRole("button", { name: "Save texts" }).click();
  await expect(page.locator('[id="texts.login.footer-error"]')).toContainText("{brand}");
  await page.locator('[name="texts.login.footer"]').fill("Protetto da {product}, senza JavaScript");
  await page.getByRole("button", { name: "Save texts" }).click();
  await expect(page.getByRole("status").first()).toHaveText("Saved.");
  const texts = (await (await adminApi("/texts/it")).json()) as { texts: { key: string; override: string | null }[] };
  expect(texts.texts.find((x) => x.key === "login.footer")?.override).toBe("Protetto da {product}, senza JavaScript");
  expect((await adminApi("/texts/it", { method: "PUT", json: { texts: { "login.footer": null } } })).status).toBe(200);
  await context.close();
});

test("keys: rotate now, and the new key is published", async ({ browser }) => {
  const { context, page } = await consoleSession(browser, admin.name);
  await page.goto(`${CONSOLE}/keys`);
  await expectOneH1(page, "Signing keys");
  const before = await page.locator("tbody tr").count();
  await page.getByRole("button", { name: "Rotate now" }).click();
  const msg = await page.getByRole("status").first().textContent();
  const kid = /Key (\S+) is published/.exec(msg ?? "")![1]!;
  await expect(page.locator("tbody tr")).toHaveCount(before + 1);
  // Published at once; it signs once relying parties' cached key sets can have it.
  await expect(page.locator(`tr[data-kid="${kid}"]`)).toContainText("Published, signs soon");
  const jwks = await (await fetch(BASE_URL + "/oauth/v2/keys")).json();
  expect(jwks.keys.map((k: { kid: string }) => k.kid)).toContain(kid);
  await shot(page, "keys-en-desktop");
  await context.close();
});

test("branding: live preview, saved colors on the login page; texts: override and reset", async ({ browser }) => {
  const { context, page } = await consoleSession(browser, admin.name);
  await page.goto(`${CONSOLE}/branding`);
  await expectOneH1(page, "Branding");
  await page.locator("#primaryColor").fill("#0f766e");
  await page.locator("#productName").fill("ACME ID");
  // The preview follows before saving.
  await expect(page.getByTestId("brand-preview").locator(".preview-button")).toHaveCSS("background-color", "rgb(15, 118, 110)");
  await expect(page.getByTestId("brand-preview")).toContainText("ACME ID");
  await page.locator("#primaryColor").fill("teal");
  await page.getByRole("button", { name: "Save branding" }).click();
  await expect(page.locator("#primaryColor-error")).toBeVisible();
  await page.locator("#primaryColor").fill("#0f766e");
  // A logo upload: shown in the preview at once, stored in the database, served by the logo endpoint.
  await page.locator("#logo").setInputFiles({ name: "logo.svg", mimeType: "image/svg+xml", buffer: Buffer.from(LOGO) });
  await expect(page.getByTestId("brand-preview").locator("img")).toBeVisible();
  await page.getByRole("button", { name: "Save branding" }).click();
  await expect(page.getByRole("status").first()).toHaveText("Saved.");
  const logo = await fetch(BASE_URL + "/ui/branding/logo");
  expect(logo.status).toBe(200);
  expect(logo.headers.get("content-type")).toContain("image/svg+xml");
  expect(await logo.text()).toBe(LOGO);
  await shot(page, "branding-en-desktop");

  // A login page in another browser shows the color and name at once.
  const visitor = await browser.newContext({ locale: "en-US" });
  const login = await visitor.newPage();
  await login.goto(`${CONSOLE}/signin`);
  await expect(login.locator('input[name="loginName"]')).toBeVisible();
  await expect(login.locator("button[type=submit]")).toHaveCSS("background-color", "rgb(15, 118, 110)");
  await expect(login.locator(".brand")).toContainText("ACME ID");
  await expect(login).toHaveTitle("ACME ID");
  // The logo link carries the logo's version, so a browser that kept the old one fetches the new one at once.
  const src = await login.locator(".brand img").getAttribute("src");
  expect(src).toMatch(/^\/ui\/branding\/logo\?v=[\w-]{22}$/);
  expect((await fetch(`${BASE_URL}${src ?? ""}`)).status).toBe(200);

  // Texts: override the login page title in English, see it, reset it.
  await page.goto(`${CONSOLE}/texts?locale=en`);
  await expectOneH1(page, "Login texts");
  await page.locator('[name="texts.login.loginName.title"]').fill("Welcome to ACME");
  await page.locator('[name="texts.login.continueTo"]').fill("to reach {app}");
  await page.getByRole("button", { name: "Save texts" }).click();
  await expect(page.locator('[id="texts.login.continueTo-error"]')).toContainText("{client}");
  await page.locator('[name="texts.login.continueTo"]').fill("to continue to {client}");
  await page.getByRole("button", { name: "Save texts" }).click();
  await expect(page.getByRole("status").first()).toHaveText("Saved.");
  await shot(page, "texts-en-desktop", false);
  await login.reload();
  await expect(login.locator("h1")).toHaveText("Welcome to ACME");
  // Other languages keep their own text.
  const de = await browser.newContext({ locale: "de-DE", extraHTTPHeaders: { "Accept-Language": "de" } });
  const dePage = await de.newPage();
  await dePage.goto(`${CONSOLE}/signin`);
  await expect(dePage.locator("h1")).not.toHaveText("Welcome to ACME");

  await page.reload();
  await page.locator(".text-item.is-overridden").first().getByRole("button", { name: "Reset to default" }).click();
  await expect(page.getByRole("status").first()).toHaveText("The text was reset to its default.");
  await login.reload();
  await expect(login.locator("h1")).not.toHaveText("Welcome to ACME");

  // Back to the default look for the other tests' screenshots.
  await adminApi("/branding", { method: "PUT", json: { primaryColor: "#c2410c", productName: "Torii", logo: null } });
  await Promise.all([visitor.close(), de.close(), context.close()]);
});

test("settings and audit log", async ({ browser }) => {
  const { context, page } = await consoleSession(browser, admin.name);
  await page.goto(`${CONSOLE}/settings`);
  await expectOneH1(page, "Settings");
  await page.locator('[name="lockoutPolicy.freeFailures"]').fill("0");
  await page.getByRole("button", { name: "Save settings" }).click();
  await expect(page.locator('[id="lockoutPolicy.freeFailures-error"]')).toBeVisible();
  await page.locator('[name="lockoutPolicy.freeFailures"]').fill("7");
  await page.locator('[name="retention.auditDays"]').fill("30");
  await page.locator('[name="lifetimes.accessToken"]').fill("1800");
  await page.getByRole("button", { name: "Save settings" }).click();
  await expect(page.getByRole("status").first()).toHaveText("Saved.");
  const s = await (await adminApi("/settings")).json();
  expect(s.lockoutPolicy.freeFailures).toBe(7);
  expect(s.retention.auditDays).toBe(30);
  expect(s.lifetimes.accessToken).toBe(1800);
  await shot(page, "settings-en-desktop");
  // Back to the defaults: the login tests that run after this file count on the default lockout.
  await adminApi("/settings", { method: "PUT", json: { lockoutPolicy: { freeFailures: 5 }, lifetimes: { accessToken: 3600 }, retention: { auditDays: 90 } } });

  await page.goto(`${CONSOLE}/audit`);
  await expectOneH1(page, "Audit log");
  await expect(page.locator("tbody tr").first()).toBeVisible();
  await shot(page, "audit-en-desktop", false);
  await page.locator("#f-action").fill("settings.updated");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page.locator("tbody tr").first()).toContainText("settings.updated");
  const actions = await page.locator("tbody tr td:nth-child(2) .audit-action code").allTextContents();
  expect(new Set(actions)).toEqual(new Set(["settings.updated"]));
  // Each event reads as a sentence, its actor by name and linked to the user's page (the newest
  // settings change is the reset above, made with the bootstrap admin's token).
  await expect(page.locator("tbody tr").first().locator(".audit-sentence")).toHaveText("admin changed the settings");
  const sentence = page.locator(".audit-sentence", { hasText: admin.name }).first();
  await expect(sentence).toHaveText(`${admin.name} changed the settings`);
  await expect(sentence.getByRole("link", { name: admin.name })).toHaveAttribute("href", `/ui/console/users/${admin.id}`);
  // The user filter takes a username; the actor column names the user.
  await page.locator("#f-actorId").fill(admin.name);
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page.locator("tbody tr").first()).toContainText(admin.name);
  await page.locator("#f-actorId").fill(admin.id);
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page.locator("tbody tr").first()).toContainText("settings.updated");
  await page.locator("#f-actorId").fill("nobody-at-all");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page.getByText("No event matches these filters.")).toBeVisible();
  await context.close();
});

test("the console in German, and on a phone", async ({ browser }) => {
  const { context, page } = await consoleSession(browser, admin.name, { locale: "de-DE" });
  await expectOneH1(page, "Übersicht");
  await page.goto(`${CONSOLE}/applications/new`);
  await expectOneH1(page, "Neue Anwendung");
  await shot(page, "application-new-de-desktop");
  // The API's validation messages in the console's language.
  await page.locator('[name="name"]').fill("Laden");
  await page.locator('[name="redirectUris"]').fill("https://laden.example.com/cb\nhttp://laden.example.com/cb");
  await page.locator('[name="accessTokenLifetime"]').fill("9999999");
  await page.getByRole("button", { name: "Anwendung erstellen" }).click();
  await expect(page.locator("#redirectUris-error")).toHaveText(
    "Unverschlüsseltes http ist nur für localhost, 127.0.0.1 oder [::1] erlaubt; verwenden Sie https. (Zeile 2)",
  );
  await expect(page.locator("#accessTokenLifetime-error")).toHaveText("Darf höchstens 604800 sein.");
  await page.goto(`${CONSOLE}/features`);
  await expect(page.getByRole("switch", { name: "Token-Austausch" })).toBeVisible();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(CONSOLE);
  await shot(page, "overview-de-phone");
  await context.close();
});

test("keyboard: skip link and sidebar reachable with Tab", async ({ browser }) => {
  const { context, page } = await consoleSession(browser, admin.name);
  await page.goto(`${CONSOLE}/applications`);
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Skip to content" })).toBeFocused();
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  await expect(page.locator(":focus")).toHaveText(/Overview/);
  await page.keyboard.press("Enter");
  await page.waitForURL(CONSOLE);
  await context.close();
});

test("a malformed router-state header is a 400 from the server, not a 500 from Next", async ({ browser }) => {
  const { context } = await consoleSession(browser, admin.name);
  // What Next's client router sends with its requests (RSC, server actions), forged so that Next's
  // own parser refuses it; the features test checks that the real ones still go through.
  for (const state of ["garbage", encodeURIComponent("[1]"), "%E0%A4%A"]) {
    const res = await context.request.get(`${CONSOLE}/applications?_rsc=x`, { headers: { RSC: "1", "Next-Router-State-Tree": state }, maxRedirects: 0 });
    expect(res.status()).toBe(400);
    expect(await res.text()).not.toMatch(/Internal Server Error/);
  }
  await context.close();
});

test("a server action whose fields or arguments were tampered with is a 400 (or refused by the action), never a 500 from Next", async ({ browser }) => {
  const { context } = await consoleSession(browser, admin.name);
  // The hidden fields React renders into a server action's form (a feature switch's), as a
  // browser without JavaScript posts them; the no-JavaScript test checks the untouched form works.
  const html = await (await context.request.get(`${CONSOLE}/features`)).text();
  const form = [...html.matchAll(/<form[^>]*>[\s\S]*?<\/form>/g)].map((m) => m[0]).find((f) => f.includes("$ACTION_REF_"))!;
  const unescape = (v: string) => v.replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  const fields: Record<string, string> = {};
  for (const [, attrs] of form.matchAll(/<input([^>]*)>/g)) {
    const name = /name="([^"]*)"/.exec(attrs!)?.[1];
    if (name) fields[unescape(name)] = unescape(/value="([^"]*)"/.exec(attrs!)?.[1] ?? "");
  }
  const ref = Object.keys(fields).find((k) => k.startsWith("$ACTION_REF_"))!.slice("$ACTION_REF_".length);
  const descriptor = `$ACTION_${ref}:0`;
  expect(JSON.parse(fields[descriptor]!)).toMatchObject({ id: expect.any(String) });
  const bound = JSON.parse(fields[descriptor]!).bound as string;
  const boundRow = `$ACTION_${ref}:${parseInt(bound.slice(2), 16)}`;
  expect(fields[boundRow]).toBeDefined();
  const tampered: Record<string, string>[] = [
    { ...fields, [descriptor]: fields[descriptor]!.slice(0, -1) },
    { ...fields, [boundRow]: "[" },
    Object.fromEntries(Object.entries(fields).filter(([k]) => k !== boundRow)),
  ];
  for (const multipart of tampered) {
    const res = await context.request.post(`${CONSOLE}/features`, { multipart, maxRedirects: 0 });
    expect(res.status()).toBe(400);
    expect(await res.text()).not.toMatch(/Internal Server Error/);
  }
  // A body that is not multipart at all.
  const broken = await context.request.post(`${CONSOLE}/features`, { headers: { "Content-Type": "multipart/form-data; boundary=x" }, data: "garbage", maxRedirects: 0 });
  expect(broken.status()).toBe(400);

  // The same action called as a page's script calls it (Next-Action), with forged arguments.
  const id = (JSON.parse(fields[descriptor]!) as { id: string }).id;
  const fetchAction = { "Next-Action": id, Accept: "text/x-component" };
  const features = async () => (await (await adminApi("/features")).json()) as Record<string, boolean>;
  const before = await features();
  // Console actions take a state and a form: arguments as text (which React would decode), or
  // rows that are not that, are refused before Next decodes them, whatever React makes of them.
  for (const data of ["[{", '{"a":1}', '["$@5"]', "[]", '[null,"x"]', '["$nzz"]']) {
    const res = await context.request.post(`${CONSOLE}/features`, { headers: { ...fetchAction, "Content-Type": "text/plain;charset=UTF-8" }, data, maxRedirects: 0 });
    expect(res.status(), data).toBe(400);
  }
  const forgedRows: Record<string, string>[] = [{ "0": "[{" }, { "0": '["$Q5"]' }, { "0": '[{"seq":"$nzz"},"$K1"]' }, { "0": '[{"seq":0},"$K1"]', "1": '[["a",1]]' }];
  for (const multipart of forgedRows) {
    const res = await context.request.post(`${CONSOLE}/features`, { headers: fetchAction, multipart, maxRedirects: 0 });
    expect(res.status(), JSON.stringify(multipart)).toBe(400);
  }
  // The shape the page's script sends, without a CSRF token: the action refuses it, nothing changes.
  const unsigned = await context.request.post(`${CONSOLE}/features`, { headers: fetchAction, multipart: { "0": '[{"seq":0},"$K1"]', _1_feature: "tokenExchange", _1_enabled: "true" }, maxRedirects: 0 });
  expect(unsigned.status()).toBe(200);
  expect(await features()).toEqual(before);
  await context.close();
});

test("sign-out ends the console session", async ({ browser }) => {
  const { context, page } = await consoleSession(browser, admin.name);
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/ui\/console\/signed-out/);
  await expectOneH1(page, "Signed out");
  await page.goto(`${CONSOLE}/users`);
  // Back at the hosted login: the password is asked for again.
  await expect(page.locator('input[name="loginName"], input[name="password"]').first()).toBeVisible();
  expect(new URL(page.url()).pathname.startsWith("/ui/login")).toBe(true);
  await context.close();
});

test.describe("a non-administrator", () => {
  test("sees a clear 'not allowed' page on every console page and no data", async ({ browser }) => {
    const plain = uniqueName("plain");
    await createUser(plain, PASSWORD);
    const secretApp = uniqueName("Hidden App ");
    await adminApi("/clients", { json: { name: secretApp, redirectUris: ["https://hidden.example.com/cb"] } });
    const { context, page } = await consoleSession(browser, plain);
    await page.waitForURL(`${CONSOLE}/not-allowed`);
    await expectOneH1(page, "Not allowed");
    await expect(page.getByText(`You are signed in as ${plain}`)).toBeVisible();
    await shot(page, "not-allowed-en-desktop");
    for (const path of ["", "/applications", "/applications/new", "/users", "/users/new", "/features", "/keys", "/branding", "/texts", "/settings", "/audit"]) {
      const res = await page.goto(CONSOLE + path);
      expect(page.url(), path).toBe(`${CONSOLE}/not-allowed`);
      expect(res?.status()).toBe(200);
      const html = await page.content();
      expect(html).not.toContain(secretApp);
      expect(html).not.toContain(admin.name);
    }
    // "Use another account" signs in as an administrator.
    await page.getByRole("link", { name: "Use another account" }).click();
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    await context.close();
  });

  test("cannot run a console action by a direct POST, and an administrator cannot without the CSRF token", async ({ browser }) => {
    // Record a real console action (the feature toggle) as the administrator.
    const { context: adminCtx, page } = await consoleSession(browser, admin.name);
    await page.goto(`${CONSOLE}/features`);
    let captured: Request | undefined;
    page.on("request", (r) => {
      if (r.method() === "POST" && r.headers()["next-action"]) captured = r;
    });
    await page.getByRole("switch", { name: "Impersonation" }).check();
    await expect(page.locator(".toggle-row").nth(1).getByRole("status")).toHaveText("Saved");
    expect((await (await adminApi("/features")).json()).impersonation).toBe(true);
    // Off again, through the API, so that a replay that worked would be visible.
    await adminApi("/features", { method: "PUT", json: { impersonation: false } });
    const req = captured!;
    const body = req.postDataBuffer()!;
    const dropped = new Set(["cookie", "content-length", "host", "connection"]);
    const headers = Object.fromEntries(Object.entries(await req.allHeaders()).filter(([h]) => !dropped.has(h)));

    // 1. A non-administrator's session with the administrator's form (CSRF token included).
    const plain = uniqueName("mallory");
    await createUser(plain, PASSWORD);
    const { context: plainCtx } = await consoleSession(browser, plain);
    const res1 = await plainCtx.request.post(req.url(), { headers, data: body, maxRedirects: 0 });
    expect(res1.status()).toBeLessThan(500);
    expect(await res1.text()).not.toContain("Saved");
    expect((await (await adminApi("/features")).json()).impersonation).toBe(false);

    // 2. No session at all.
    const anon = await browser.newContext();
    const res2 = await anon.request.post(req.url(), { headers, data: body, maxRedirects: 0 });
    expect(res2.status()).toBeLessThan(500);
    expect((await (await adminApi("/features")).json()).impersonation).toBe(false);

    // 3. The administrator's own session, but a forged form without the right CSRF token.
    const text = body.toString("latin1");
    const csrf = /name="[^"]*csrf"\r\n\r\n([^\r]+)/.exec(text)?.[1];
    expect(csrf, text.slice(0, 400)).toBeTruthy();
    const forged = Buffer.from(body.toString("latin1").replace(csrf!, "forged-token"), "latin1");
    const res3 = await adminCtx.request.post(req.url(), { headers, data: forged, maxRedirects: 0 });
    expect(res3.status()).toBeLessThan(500);
    expect((await (await adminApi("/features")).json()).impersonation).toBe(false);

    // The unmodified request in the administrator's session does work (the replay is a faithful one).
    await adminCtx.request.post(req.url(), { headers, data: body, maxRedirects: 0 });
    expect((await (await adminApi("/features")).json()).impersonation).toBe(true);
    await adminApi("/features", { method: "PUT", json: { impersonation: false } });

    // Sign-out is a POST with the CSRF token too.
    const res4 = await adminCtx.request.post(`${CONSOLE}/signout`, { form: { csrf: "forged" }, maxRedirects: 0 });
    expect(res4.status()).toBe(403);
    await Promise.all([adminCtx.close(), plainCtx.close(), anon.close()]);
  });

  test("without any session, console pages send the browser to sign in", async ({ request }) => {
    const res = await request.get(`${CONSOLE}/users`, { maxRedirects: 0 });
    expect([303, 307, 308]).toContain(res.status());
    expect(res.headers().location).toContain("/ui/console/signin");
  });
});

test("APIs: describe an API with scopes and roles, let an application use it, give it a role; its token carries them", async ({ browser }) => {
  const { context, page } = await consoleSession(browser, admin.name);
  await page.getByRole("navigation", { name: "Console sections" }).getByRole("link", { name: "APIs" }).click();
  await expectOneH1(page, "APIs");
  await page.getByRole("link", { name: "New API" }).first().click();
  await expectOneH1(page, "New API");

  // The API's field errors land next to their inputs.
  const name = uniqueName("Orders ");
  const identifier = `https://api.example.com/${name.replace(/\s/g, "-").toLowerCase()}`;
  await page.getByLabel("Identifier").fill("orders");
  await page.locator(`[name="name"]`).fill(name);
  await page.getByLabel("Scopes").fill("orders:read | Read your orders\nopenid");
  await page.getByLabel("Roles").fill("viewer | Viewer\nadmin | Administrator | Everything");
  await page.getByRole("button", { name: "Create API" }).click();
  await expect(page.locator("#identifier-error")).toHaveText("Must be an absolute URI without a fragment, such as https://api.example.com.");
  await expect(page.locator("#scopes-error")).toContainText("This is a scope of the protocol itself.");

  await page.getByLabel("Identifier").fill(identifier);
  await page.getByLabel("Scopes").fill("orders:read | Read your orders");
  await page.getByRole("button", { name: "Create API" }).click();
  await expect(page.getByRole("status").first()).toContainText(`${name} was created.`);
  await page.getByRole("link", { name: "Open the API" }).click();
  await expectOneH1(page, name);
  await expect(page.getByLabel("Roles")).toHaveValue("viewer | Viewer\nadmin | Administrator | Everything");

  // Its introspection secret, shown once.
  await page.getByRole("button", { name: "Create a secret" }).click();
  const apiSecret = (await page.getByTestId("secret-value").textContent())!.trim();
  expect(apiSecret.length).toBeGreaterThan(30);

  // An application for client credentials may use it, with its scope, and holds its viewer role.
  const created = await (await adminApi("/clients", { method: "POST", json: { name: uniqueName("worker "), redirectUris: [], responseTypes: [], grantTypes: ["client_credentials"] } })).json();
  await page.goto(`${CONSOLE}/applications/${encodeURIComponent(created.clientId)}`);
  const apis = page.locator("fieldset.checks", { has: page.locator("legend", { hasText: name }) });
  await apis.getByLabel("May use this API").check();
  await apis.getByLabel("orders:read").check();
  await page.getByRole("button", { name: "Save changes" }).click();
  await expect(page.locator("#section-settings").getByRole("status")).toHaveText("Saved.");
  expect((await (await adminApi(`/clients/${created.clientId}`)).json()).apiScopes).toEqual({ [identifier]: ["orders:read"] });

  await page.reload();
  await page.locator("#section-roles fieldset.checks", { has: page.locator("legend", { hasText: name }) }).getByLabel("Viewer").check();
  await page.getByRole("button", { name: "Save API roles" }).click();
  await expect(page.locator("#section-roles").getByRole("status")).toHaveText("Saved.");

  const res = await fetch(`${BASE_URL}/oauth/v2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: "Basic " + Buffer.from(`${created.clientId}:${created.clientSecret}`).toString("base64") },
    body: new URLSearchParams({ grant_type: "client_credentials", resource: identifier }).toString(),
  });
  expect(res.status).toBe(200);
  const body = await res.json();
  expect(body.scope).toBe("orders:read");
  expect(decodeJwt(body.access_token)).toMatchObject({ aud: identifier, roles: ["viewer"] });

  // The API introspects the token with its own secret.
  const seen = await fetch(`${BASE_URL}/oauth/v2/introspect`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: "Basic " + Buffer.from(`${encodeURIComponent(identifier)}:${apiSecret}`).toString("base64") },
    body: new URLSearchParams({ token: body.access_token }).toString(),
  });
  expect(await seen.json()).toMatchObject({ active: true, aud: identifier, roles: ["viewer"] });

  // Deleting the API: back at the list, and the application no longer names it.
  const apiId = (await (await adminApi("/apis")).json()).apis.find((a: { identifier: string }) => a.identifier === identifier).apiId;
  await page.goto(`${CONSOLE}/apis/${apiId}`);
  await page.getByText("Delete API").click();
  await page.getByRole("button", { name: "Delete for good" }).click();
  await expect(page.getByRole("status").first()).toHaveText("The API was deleted.");
  expect((await (await adminApi(`/clients/${created.clientId}`)).json()).apiScopes).toEqual({});
  await adminApi(`/clients/${created.clientId}`, { method: "DELETE" });
  await context.close();
});

test("APIs: assign a role to several users at once by login name, see who holds it, remove one", async ({ browser }) => {
  const { context, page } = await consoleSession(browser, admin.name);
  const identifier = `https://api.example.com/${uniqueName("bulk-").toLowerCase().replace(/[^a-z0-9-]/g, "")}`;
  const api = await (await adminApi("/apis", { json: { identifier, name: "Bulk roles", roles: [{ key: "viewer", name: "Viewer" }, { key: "editor", name: "Editor" }] } })).json();
  const first = uniqueName("ann");
  const second = uniqueName("ben");
  const one = await createUser(first, PASSWORD);
  await createUser(second, PASSWORD);

  await page.goto(`${CONSOLE}/apis/${api.apiId}`);
  const holders = page.locator("#section-holders");
  await expect(holders.locator("#role-editor")).toContainText("Nobody holds this role.");
  await holders.getByRole("radio", { name: "Editor" }).check();
  await holders.getByLabel("Login names").fill(`${first}\n\n${second.toUpperCase()}\nnobody-${first}`);
  await holders.getByRole("button", { name: "Assign role" }).click();
  await expect(holders.getByRole("status")).toHaveText("2 users hold the role editor now.");
  await expect(holders.locator("#usernames-error")).toHaveText(`No user has this login name: nobody-${first}.`);

  const editors = holders.locator("#role-editor");
  await expect(editors.getByRole("row")).toHaveCount(3);
  await expect(editors.getByRole("link", { name: first })).toBeVisible();
  await expect(editors.getByRole("link", { name: second })).toBeVisible();
  await expect(holders.locator("#role-viewer")).toContainText("Nobody holds this role.");
  await holders.screenshot({ path: `${SHOTS}/console-api-holders.png` });
  expect(await (await adminApi(`/users/${one.id}/roles`)).json()).toEqual({ [identifier]: ["editor"] });

  // Its row goes at once, and stays gone.
  await editors.getByRole("row", { name: first }).getByRole("button", { name: "Remove" }).click();
  await expect(editors.getByRole("row")).toHaveCount(2);
  await page.reload();
  await expect(editors.getByRole("row")).toHaveCount(2);
  await expect(editors.getByRole("link", { name: second })).toBeVisible();
  expect(await (await adminApi(`/users/${one.id}/roles`)).json()).toEqual({});
  await adminApi(`/apis/${api.apiId}`, { method: "DELETE" });
  await context.close();
});

test("mail: set the mail server, send a test mail, read it in the outbox; a user's reset mail", async ({ browser }) => {
  const sink = await startSmtpSink();
  const { context, page } = await consoleSession(browser, admin.name);
  try {
    await page.goto(`${CONSOLE}/settings`);
    const smtp = page.locator("#section-smtp");
    await expect(smtp.getByTestId("smtp-status")).toContainText("No mail server");
    await smtp.getByLabel("Host").fill("127.0.0.1");
    await smtp.getByLabel("Port").fill("0");
    await smtp.getByLabel("Security").selectOption("none");
    await smtp.getByLabel("Sender address").fill("noreply@torii.test");
    await smtp.getByRole("button", { name: "Save mail server" }).click();
    await expect(smtp.locator("#port-error")).toBeVisible();
    await smtp.getByLabel("Port").fill(String(sink.port));
    await smtp.getByLabel("Password", { exact: true }).fill("relay-secret");
    await smtp.getByRole("button", { name: "Save mail server" }).click();
    await expect(smtp.getByRole("status").first()).toHaveText("Saved.");
    await page.reload();
    await expect(page.locator("#section-smtp").getByTestId("smtp-status")).toContainText("Mail is sent through this server.");
    await expect(page.locator("#section-smtp").getByLabel("Password", { exact: true })).toHaveValue("");

    await page.locator("#section-smtp").getByLabel("Test mail to").fill("console-test@torii.test");
    await page.getByRole("button", { name: "Send test mail" }).click();
    await expect(page.locator("#section-smtp").getByRole("status").first()).toContainText("accepted by the server");
    await sink.waitFor((m) => m.to.includes("console-test@torii.test"));

    // An administrator mails a user a reset link; the outbox shows both mails.
    const name = uniqueName("mailuser");
    const user = await createUser(name, PASSWORD);
    await page.goto(`${CONSOLE}/users/${user.id}`);
    await page.getByRole("button", { name: "Send password reset mail" }).click();
    await expect(page.locator("#section-password").getByRole("status").first()).toContainText("on its way");
    await sink.waitFor((m) => m.to.includes(`${name}@example.com`));

    await page.getByRole("navigation", { name: "Console sections" }).getByRole("link", { name: "Outbox" }).click();
    await expectOneH1(page, "Outbox");
    await page.getByRole("link", { name: "Reset your Torii password" }).first().click();
    await expect(page.getByTestId("mail-text")).toContainText("/ui/login/reset?token=");
    await expect(page.frameLocator("iframe.mail-frame").getByRole("link", { name: "Choose a new password" })).toBeVisible();
  } finally {
    await adminApi("/settings/smtp", { method: "DELETE" });
    await context.close();
    await sink.close();
  }
});
