import { expect, test } from "@playwright/test";
import { createUser, RelyingParty } from "./rp";
import { callbackParams, enterPassword, PASSWORD, signIn, uniqueName } from "./login-helpers";

let rp: RelyingParty;
let codeOnly: RelyingParty;
let alice: { id: string; name: string };
let bob: { id: string; name: string };

test.beforeAll(async () => {
  rp = await RelyingParty.start();
  codeOnly = await RelyingParty.start({ responseTypes: ["code"], grantTypes: ["authorization_code"] });
  const a = uniqueName("alice");
  const b = uniqueName("bob");
  alice = { id: (await createUser(a, PASSWORD)).id, name: a };
  bob = { id: (await createUser(b, PASSWORD)).id, name: b };
});
test.afterAll(async () => {
  await rp.stop();
  await codeOnly.stop();
});

test("code flow with PKCE end to end: the relying party verifies the ID token", async ({ page }) => {
  const { verifier, challenge } = RelyingParty.pkce();
  await page.goto(rp.authorizeUrl({ state: "st-1", nonce: "no-1", code_challenge: challenge, code_challenge_method: "S256", scope: "openid profile email" }));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sign in");
  await expect(page.getByText("to continue to E2E Relying Party")).toBeVisible();
  await signIn(page, alice.name);
  await page.waitForURL(rp.redirectUri + "**");
  const p = callbackParams(page.url());
  expect(p.state).toBe("st-1");
  const tokens = await rp.exchange(p.code!, verifier);
  const claims = await rp.verifyIdToken(tokens.id_token as string, "no-1");
  expect(claims.sub).toBe(alice.id);
  expect(claims.azp).toBe(rp.clientId);
  expect(typeof claims.auth_time).toBe("number");
  // The code is single-use.
  await expect(rp.exchange(p.code!, verifier)).rejects.toThrow(/invalid_grant/);
});

test("response modes: query by default, fragment and form_post on request", async ({ page }) => {
  await page.goto(rp.authorizeUrl({ state: "q" }));
  await signIn(page, alice.name);
  await page.waitForURL(rp.redirectUri + "**");
  expect(new URL(page.url()).searchParams.get("code")).toBeTruthy();

  await page.goto(rp.authorizeUrl({ state: "f", response_mode: "fragment" }));
  await page.waitForURL(rp.redirectUri + "**");
  expect(new URL(page.url()).search).toBe("");
  expect(callbackParams(page.url()).code).toBeTruthy();

  const before = rp.received.length;
  await page.goto(rp.authorizeUrl({ state: "fp", response_mode: "form_post" }));
  await page.waitForURL(rp.redirectUri);
  await expect(page.locator("h1")).toHaveText("Relying party callback");
  const posted = rp.received.slice(before).find((r) => r.method === "POST")!;
  expect(posted.params.state).toBe("fp");
  expect(posted.params.code).toBeTruthy();
  await rp.exchange(posted.params.code!);
});

test("implicit flow: id_token, and id_token token with at_hash", async ({ page }) => {
  await page.goto(rp.authorizeUrl({ response_type: "id_token", nonce: "imp-1", state: "i1", scope: "openid email" }));
  await signIn(page, alice.name);
  await page.waitForURL(rp.redirectUri + "**");
  let p = callbackParams(page.url());
  expect(p.access_token).toBeUndefined();
  let claims = await rp.verifyIdToken(p.id_token!, "imp-1");
  expect(claims.email).toContain("@example.com");

  await page.goto(rp.authorizeUrl({ response_type: "id_token token", nonce: "imp-2", state: "i2", scope: "openid email" }));
  await page.waitForURL(rp.redirectUri + "**");
  p = callbackParams(page.url());
  expect(p.token_type).toBe("Bearer");
  expect(Number(p.expires_in)).toBeGreaterThan(0);
  expect(p.state).toBe("i2");
  claims = await rp.verifyIdToken(p.id_token!, "imp-2");
  expect(claims.at_hash).toBeTruthy();
  expect(claims.email).toBeUndefined();
});

test("every error of the table reaches the redirect URI with state; untrusted ones stay on our page", async ({ page, browser }) => {
  const expectError = async (url: string, error: string, target = rp) => {
    await page.goto(url);
    await page.waitForURL(target.redirectUri + "**");
    const p = callbackParams(page.url());
    expect(p.error).toBe(error);
    expect(p.error_description).toBeTruthy();
    expect(p.state).toBe("e");
  };
  await expectError(rp.authorizeUrl({ state: "e", response_type: "" }), "invalid_request");
  await expectError(rp.authorizeUrl({ state: "e", scope: "email" }), "invalid_scope");
  await expectError(rp.authorizeUrl({ state: "e", response_type: "token" }), "unsupported_response_type");
  await expectError(codeOnly.authorizeUrl({ state: "e", response_type: "id_token", nonce: "n" }), "unauthorized_client", codeOnly);
  await expectError(rp.authorizeUrl({ state: "e", request: "eyJhbGciOiJub25lIn0.e30." }), "request_not_supported");
  await expectError(rp.authorizeUrl({ state: "e", prompt: "none" }), "login_required");
  await expectError(rp.authorizeUrl({ state: "e", response_type: "id_token" }), "invalid_request"); // implicit without nonce

  // account_selection_required (OIDC Core 3.1.2.6): two sessions, prompt=none, nothing says which.
  await page.goto(rp.authorizeUrl({}));
  await signIn(page, alice.name);
  await page.waitForURL(rp.redirectUri + "**");
  await page.goto(rp.authorizeUrl({ prompt: "login" }));
  await signIn(page, bob.name);
  await page.waitForURL(rp.redirectUri + "**");
  await expectError(rp.authorizeUrl({ state: "e", prompt: "none" }), "account_selection_required");

  const res = await page.goto(`/oauth/v2/authorize?client_id=${rp.clientId}&redirect_uri=${encodeURIComponent("https://evil.example/cb")}&response_type=code&scope=openid`);
  expect(res!.status()).toBe(400);
  expect(page.url()).toContain("/oauth/v2/authorize");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("This sign-in link cannot be used");
  const de = await browser.newContext({ locale: "de-DE" });
  const dePage = await de.newPage();
  const r2 = await dePage.goto(`/oauth/v2/authorize?client_id=unknown&redirect_uri=${encodeURIComponent(rp.redirectUri)}`);
  expect(r2!.status()).toBe(400);
  await expect(dePage.locator("#error-message")).toHaveText("Die Anwendung, die Sie hierher geschickt hat, ist nicht registriert.");
  await de.close();
});

test("prompt values: none is silent, login asks again, select_account shows the chooser, create shows registration", async ({ page }) => {
  await page.goto(rp.authorizeUrl({}));
  await signIn(page, alice.name);
  await page.waitForURL(rp.redirectUri + "**");

  await page.goto(rp.authorizeUrl({ prompt: "none", state: "n" }));
  await page.waitForURL(rp.redirectUri + "**");
  expect(callbackParams(page.url()).code).toBeTruthy();

  await page.goto(rp.authorizeUrl({ prompt: "login" }));
  await expect(page.locator('input[name="loginName"]')).toBeVisible();
  await signIn(page, alice.name);
  await page.waitForURL(rp.redirectUri + "**");

  await page.goto(rp.authorizeUrl({ prompt: "select_account" }));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Choose an account");
  await page.getByRole("link", { name: "Use another account" }).click();
  await expect(page.locator('input[name="loginName"]')).toBeVisible();

  await page.goto(rp.authorizeUrl({ prompt: "create" }));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Create your account");
  await expect(page.locator('input[name="username"]')).toBeVisible();
});

test("max_age forces a fresh password; id_token_hint selects its subject among two sessions", async ({ page }) => {
  await page.goto(rp.authorizeUrl({ response_type: "id_token", nonce: "h" }));
  await signIn(page, alice.name);
  await page.waitForURL(rp.redirectUri + "**");
  const aliceToken = callbackParams(page.url()).id_token!;
  await page.goto(rp.authorizeUrl({ prompt: "login" }));
  await signIn(page, bob.name);
  await page.waitForURL(rp.redirectUri + "**");

  await page.goto(rp.authorizeUrl({ response_type: "id_token", nonce: "h2", prompt: "none", id_token_hint: aliceToken }));
  await page.waitForURL(rp.redirectUri + "**");
  expect((await rp.verifyIdToken(callbackParams(page.url()).id_token!, "h2")).sub).toBe(alice.id);

  await page.waitForTimeout(2100);
  await page.goto(rp.authorizeUrl({ id_token_hint: aliceToken, max_age: "1", nonce: "m" }));
  await expect(page.getByTestId("login-name")).toHaveText(new RegExp(alice.name));
  await enterPassword(page);
  await page.waitForURL(rp.redirectUri + "**");
  const tokens = await rp.exchange(callbackParams(page.url()).code!);
  const claims = await rp.verifyIdToken(tokens.id_token as string, "m");
  expect(claims.sub).toBe(alice.id);
  expect(Date.now() / 1000 - (claims.auth_time as number)).toBeLessThan(10);
});

test("login_hint fills the login name exactly, a + included", async ({ page }) => {
  const name = uniqueName("hint+tag");
  await createUser(name, PASSWORD, { email: "hint@example.com" });
  await page.goto(rp.authorizeUrl({ login_hint: name }));
  await expect(page.locator('input[name="loginName"]')).toHaveValue(name);
  await page.locator('button[type="submit"]').click();
  await enterPassword(page);
  await page.waitForURL(rp.redirectUri + "**");
  expect(callbackParams(page.url()).code).toBeTruthy();
});
