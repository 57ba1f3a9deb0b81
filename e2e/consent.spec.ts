// The consent screen of a third-party application (README, "Consent"), in all four languages:
// asked the first time, remembered, asked again for a new scope, a refusal is access_denied,
// prompt=none without consent is consent_required, and an administrator's withdrawal asks again.
import { expect, test } from "@playwright/test";
import { createUser, RelyingParty } from "./rp";
import { callbackParams, PASSWORD, signIn, uniqueName } from "./login-helpers";
import { adminApi, SHOTS } from "./support";

const TEXT = {
  en: { title: "Allow access?", allow: "Allow", deny: "Deny", profile: "See your name, nickname, language and profile details" },
  de: { title: "Zugriff erlauben?", allow: "Erlauben", deny: "Ablehnen", profile: "Ihren Namen, Spitznamen, Ihre Sprache und Profilangaben sehen" },
  fr: { title: "Autoriser l’accès ?", allow: "Autoriser", deny: "Refuser", profile: "Voir votre nom, votre surnom, votre langue et les détails de votre profil" },
  it: { title: "Consentire l’accesso?", allow: "Consenti", deny: "Rifiuta", profile: "Vedere il tuo nome, soprannome, lingua e dettagli del profilo" },
} as const;

let thirdParty: RelyingParty;
let firstParty: RelyingParty;

test.beforeAll(async () => {
  thirdParty = await RelyingParty.start({ name: "Partner Analytics", firstParty: false });
  firstParty = await RelyingParty.start();
});
test.afterAll(async () => {
  await thirdParty.stop();
  await firstParty.stop();
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

    // A first-party application never asks.
    await page.goto(firstParty.authorizeUrl({ scope: "openid profile email", state: "f1" }));
    await page.waitForURL(firstParty.redirectUri + "**");
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
