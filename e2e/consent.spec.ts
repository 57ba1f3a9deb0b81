// The consent screen of a third-party application (README, "Consent"), in all four languages:
// asked the first time, remembered, asked again for a new scope, a refusal is access_denied,
// prompt=none without consent is consent_required, and an administrator's withdrawal asks again;
// API scopes are grouped by API, described in the language, and remembered per API.
import { expect, test } from "@playwright/test";
import { createUser, RelyingParty } from "./rp";
import { callbackParams, PASSWORD, signIn, uniqueName } from "./login-helpers";
import { adminApi, SHOTS } from "./support";

const TEXT = {
  en: { title: "Allow access?", allow: "Allow", deny: "Deny", profile: "See your name, nickname, language and profile details", account: "Your account", filesAccess: "Use Files on your behalf" },
  de: { title: "Zugriff erlauben?", allow: "Erlauben", deny: "Ablehnen", profile: "Ihren Namen, Spitznamen, Ihre Sprache und Profilangaben sehen", account: "Ihr Konto", filesAccess: "Files in Ihrem Namen verwenden" },
  fr: { title: "Autoriser l’accès ?", allow: "Autoriser", deny: "Refuser", profile: "Voir votre nom, votre surnom, votre langue et les détails de votre profil", account: "Votre compte", filesAccess: "Utiliser Files en votre nom" },
  it: { title: "Consentire l’accesso?", allow: "Consenti", deny: "Rifiuta", profile: "Vedere il tuo nome, soprannome, lingua e dettagli del profilo", account: "Il tuo account", filesAccess: "Usare Files per tuo conto" },
} as const;

// The API scope's own text per locale, as an administrator entered it.
const ORDERS_READ = { en: "Read your orders", de: "Ihre Bestellungen lesen", fr: "Lire vos commandes", it: "Leggere i tuoi ordini" } as const;
const RUN = Date.now().toString(36);
const ORDERS = `https://orders-${RUN}.example/api`;
const FILES = `https://files-${RUN}.example/api`;

let thirdParty: RelyingParty;
let firstParty: RelyingParty;
let apiClient: RelyingParty;
const apiIds: string[] = [];

test.beforeAll(async () => {
  thirdParty = await RelyingParty.start({ name: "Partner Analytics", firstParty: false });
  firstParty = await RelyingParty.start();
  const orders = await adminApi("/apis", {
    method: "POST",
    json: {
      identifier: ORDERS,
      name: "Orders",
      scopes: [
        { name: "orders:read", description: ORDERS_READ.en, descriptions: ORDERS_READ },
        { name: "orders:write", description: "Place orders" },
      ],
      accessTokenLifetime: 300,
    },
  });
  expect(orders.status).toBe(201);
  apiIds.push(((await orders.json()) as { apiId: string }).apiId);
  const files = await adminApi("/apis", { method: "POST", json: { identifier: FILES, name: "Files", scopes: [{ name: "files:read", description: "Read your files" }], accessTokenLifetime: 300 } });
  expect(files.status).toBe(201);
  apiIds.push(((await files.json()) as { apiId: string }).apiId);
  apiClient = await RelyingParty.start({ name: "Partner Shop", firstParty: false, apiScopes: { [ORDERS]: ["orders:read", "orders:write"], [FILES]: ["files:read"] } });
});
test.afterAll(async () => {
  await thirdParty.stop();
  await firstParty.stop();
  await apiClient.stop();
  // Other specs (the console's screenshots) list every API: leave none behind.
  for (const id of apiIds) expect((await adminApi(`/apis/${id}`, { method: "DELETE" })).status).toBe(204);
});

for (const [locale, text] of Object.entries(TEXT)) {
  test(`consent in ${locale}: asked once, remembered, asked again for a new scope; deny is access_denied`, async ({ browser }) => {
    const context = await browser.newContext({ locale });
    const page = await context.newPage();
    const name = uniqueName(`consent${locale}`);
    const user = await createUser(name, PASSWORD);

    // First time: sign in, then the consent screen names the application and what it asks for.
    await page.goto(thirdParty.authorizeUrl({ scope: "openid profile", state: "s1" }));
    await signIn(page, name);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(text.title);
    await expect(page.getByText("Partner Analytics").first()).toBeVisible();
    await expect(page.getByText(text.profile)).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/consent-${locale}.png`, fullPage: true });
    await page.getByRole("button", { name: text.allow }).click();
    await page.waitForURL(thirdParty.redirectUri + "**");
    expect(callbackParams(page.url()).code).toBeTruthy();

    // Remembered: the same scopes (or fewer) finish at once, also with prompt=none.
    await page.goto(thirdParty.authorizeUrl({ scope: "openid", state: "s2", prompt: "none" }));
    await page.waitForURL(thirdParty.redirectUri + "**");
    expect(callbackParams(page.url())).toMatchObject({ state: "s2" });
    expect(callbackParams(page.url()).code).toBeTruthy();

    // A new scope: prompt=none cannot ask, so consent_required; without it, the screen again.
    await page.goto(thirdParty.authorizeUrl({ scope: "openid profile email", state: "s3", prompt: "none" }));
    await page.waitForURL(thirdParty.redirectUri + "**");
    expect(callbackParams(page.url())).toMatchObject({ error: "consent_required", state: "s3" });
    await page.goto(thirdParty.authorizeUrl({ scope: "openid profile email", state: "s4" }));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(text.title);
    await page.getByRole("button", { name: text.deny }).click();
    await page.waitForURL(thirdParty.redirectUri + "**");
    expect(callbackParams(page.url())).toMatchObject({ error: "access_denied", state: "s4" });
    expect(callbackParams(page.url()).code).toBeUndefined();

    // prompt=consent asks even for what was allowed.
    await page.goto(thirdParty.authorizeUrl({ scope: "openid", state: "s5", prompt: "consent" }));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(text.title);
    await page.getByRole("button", { name: text.allow }).click();
    await page.waitForURL(thirdParty.redirectUri + "**");
    expect(callbackParams(page.url()).code).toBeTruthy();

    // A first-party application never asks, not even with prompt=consent.
    await page.goto(firstParty.authorizeUrl({ scope: "openid profile email", state: "f1" }));
    await page.waitForURL(firstParty.redirectUri + "**");
    expect(callbackParams(page.url()).code).toBeTruthy();
    await page.goto(firstParty.authorizeUrl({ scope: "openid profile", state: "f2", prompt: "consent" }));
    await page.waitForURL(firstParty.redirectUri + "**");
    expect(callbackParams(page.url())).toMatchObject({ state: "f2" });
    expect(callbackParams(page.url()).code).toBeTruthy();

    // The administrator sees the consent and withdraws it: the application asks again.
    const listed = (await (await adminApi(`/users/${user.id}/consents`)).json()) as { consents: { clientId: string; scopes: string[] }[] };
    expect(listed.consents).toEqual([expect.objectContaining({ clientId: thirdParty.clientId, scopes: ["openid", "profile"] })]);
    expect((await adminApi(`/users/${user.id}/consents/${thirdParty.clientId}`, { method: "DELETE" })).status).toBe(204);
    await page.goto(thirdParty.authorizeUrl({ scope: "openid", state: "s6", prompt: "none" }));
    await page.waitForURL(thirdParty.redirectUri + "**");
    expect(callbackParams(page.url())).toMatchObject({ error: "consent_required", state: "s6" });
    await context.close();
  });
}

for (const [locale, text] of Object.entries(TEXT)) {
  test(`consent for APIs in ${locale}: grouped by API in the language, remembered per API; a new API scope or API asks again`, async ({ browser }) => {
    const context = await browser.newContext({ locale });
    const page = await context.newPage();
    const name = uniqueName(`apiconsent${locale}`);
    const user = await createUser(name, PASSWORD);

    // First time: the OpenID scopes under "your account", the API's scopes under its name, in the language.
    await page.goto(apiClient.authorizeUrl({ scope: "openid profile orders:read", resource: ORDERS, state: "a1" }));
    await signIn(page, name);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(text.title);
    const account = page.getByRole("region", { name: text.account });
    await expect(account.getByText(text.profile)).toBeVisible();
    const orders = page.getByRole("region", { name: "Orders" });
    await expect(orders.getByText(ORDERS_READ[locale as keyof typeof ORDERS_READ])).toBeVisible();
    await expect(orders.getByText("orders:read")).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/consent-api-${locale}.png`, fullPage: true });
    await page.getByRole("button", { name: text.allow }).click();
    await page.waitForURL(apiClient.redirectUri + "**");
    expect(callbackParams(page.url()).code).toBeTruthy();

    // Remembered for that API and scope.
    await page.goto(apiClient.authorizeUrl({ scope: "openid orders:read", resource: ORDERS, state: "a2", prompt: "none" }));
    await page.waitForURL(apiClient.redirectUri + "**");
    expect(callbackParams(page.url())).toMatchObject({ state: "a2" });
    expect(callbackParams(page.url()).code).toBeTruthy();

    // A new scope of the API: consent_required without a screen, the screen otherwise.
    await page.goto(apiClient.authorizeUrl({ scope: "openid orders:read orders:write", resource: ORDERS, state: "a3", prompt: "none" }));
    await page.waitForURL(apiClient.redirectUri + "**");
    expect(callbackParams(page.url())).toMatchObject({ error: "consent_required", state: "a3" });

    // A new API, even with no scope of its own: asked again, shown under its name; deny is access_denied.
    await page.goto(apiClient.authorizeUrl({ scope: "openid", resource: FILES, state: "a4", prompt: "none" }));
    await page.waitForURL(apiClient.redirectUri + "**");
    expect(callbackParams(page.url())).toMatchObject({ error: "consent_required", state: "a4" });
    await page.goto(apiClient.authorizeUrl({ scope: "openid", resource: FILES, state: "a5" }));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(text.title);
    await expect(page.getByRole("region", { name: "Files" }).getByText(text.filesAccess)).toBeVisible();
    await page.getByRole("button", { name: text.deny }).click();
    await page.waitForURL(apiClient.redirectUri + "**");
    expect(callbackParams(page.url())).toMatchObject({ error: "access_denied", state: "a5" });

    // What was allowed, as the administrator sees it: the OpenID scopes, and the API with its scopes.
    const listed = (await (await adminApi(`/users/${user.id}/consents`)).json()) as { consents: unknown[] };
    expect(listed.consents).toEqual([expect.objectContaining({ clientId: apiClient.clientId, scopes: ["openid", "profile"], apis: { [ORDERS]: ["orders:read"] } })]);
    await context.close();
  });
}
