import { expect, test, type Page } from "@playwright/test";
import { callbackParams, PASSWORD, signIn, uniqueName } from "./login-helpers";
import { createUser, RelyingParty } from "./rp";
import { adminApi, BASE_URL } from "./support";

let rp: RelyingParty;
let bye: string;
let user: string;

test.beforeAll(async () => {
  rp = await RelyingParty.start({ responseTypes: ["code"], grantTypes: ["authorization_code", "refresh_token"] });
  bye = rp.redirectUri.replace(/\/cb$/, "/bye");
  const res = await adminApi(`/clients/${rp.clientId}`, { method: "PATCH", json: { postLogoutRedirectUris: [bye] } });
  expect(res.status).toBe(200);
  user = uniqueName("logout");
  await createUser(user, PASSWORD);
});
test.afterAll(async () => {
  await rp.stop();
});

const basicAuth = () => "Basic " + Buffer.from(`${encodeURIComponent(rp.clientId)}:${encodeURIComponent(rp.clientSecret!)}`).toString("base64");

async function post(path: string, params: Record<string, string>) {
  const res = await fetch(BASE_URL + path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: basicAuth() },
    body: new URLSearchParams(params),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Signs in through the hosted login and redeems the code like the relying party does. */
async function signInAtRp(page: Page): Promise<{ access: string; refresh: string; idToken: string }> {
  await page.goto(rp.authorizeUrl({ state: "in", nonce: "n", scope: "openid profile offline_access" }));
  await signIn(page, user);
  await page.waitForURL(rp.redirectUri + "**");
  const tokens = await rp.exchange(callbackParams(page.url()).code!);
  return { access: tokens.access_token as string, refresh: tokens.refresh_token as string, idToken: tokens.id_token as string };
}

function endSessionUrl(params: Record<string, string>): string {
  return `${BASE_URL}/oidc/v1/end_session?${new URLSearchParams(params).toString()}`;
}

/** After a logout: prompt=none answers login_required, the access token is inactive, the refresh token invalid_grant. */
async function expectSignedOut(page: Page, tokens: { access: string; refresh: string }) {
  await page.goto(rp.authorizeUrl({ state: "pn", prompt: "none" }));
  await page.waitForURL(rp.redirectUri + "**");
  const p = callbackParams(page.url());
  expect(p.error).toBe("login_required");
  expect(p.state).toBe("pn");
  expect((await post("/oauth/v2/introspect", { token: tokens.access })).body).toEqual({ active: false });
  const r = await post("/oauth/v2/token", { grant_type: "refresh_token", refresh_token: tokens.refresh });
  expect(r.status).toBe(400);
  expect(r.body.error).toBe("invalid_grant");
}

test("id_token_hint with a registered post_logout_redirect_uri: back at the relying party with state, signed out", async ({ page }) => {
  const tokens = await signInAtRp(page);
  expect((await post("/oauth/v2/introspect", { token: tokens.access })).body.active).toBe(true);
  await page.goto(endSessionUrl({ id_token_hint: tokens.idToken, post_logout_redirect_uri: bye, state: "bye-1" }));
  await page.waitForURL(bye + "**");
  expect(new URL(page.url()).searchParams.get("state")).toBe("bye-1");
  await expectSignedOut(page, tokens);
});

test("an unregistered post_logout_redirect_uri is not followed: the signed-out page instead", async ({ page }) => {
  const tokens = await signInAtRp(page);
  const elsewhere = rp.redirectUri.replace(/\/cb$/, "/elsewhere");
  await page.goto(endSessionUrl({ id_token_hint: tokens.idToken, post_logout_redirect_uri: elsewhere, state: "x" }));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("You are signed out");
  expect(page.url()).toBe(`${BASE_URL}/ui/login/signedout`);
  expect(rp.received.filter((r) => r.path === "/elsewhere")).toEqual([]);
  await expectSignedOut(page, tokens);
});

test("without id_token_hint the user confirms on a page that cannot be framed", async ({ page }) => {
  const tokens = await signInAtRp(page);
  const response = await page.goto(endSessionUrl({ client_id: rp.clientId, post_logout_redirect_uri: bye, state: "c-1" }));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sign out?");
  await expect(page.getByText("E2E Relying Party wants to sign you out.")).toBeVisible();
  await expect(page.getByTestId("logout-accounts")).toContainText(user);
  const headers = response!.headers();
  expect(headers["x-frame-options"]).toBe("DENY");
  expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
  // Still signed in until the user confirms.
  expect((await post("/oauth/v2/introspect", { token: tokens.access })).body.active).toBe(true);
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(bye + "**");
  expect(new URL(page.url()).searchParams.get("state")).toBe("c-1");
  await expectSignedOut(page, tokens);
});

test("the user may decline the sign-out: back at the relying party, still signed in", async ({ page }) => {
  const tokens = await signInAtRp(page);
  await page.goto(endSessionUrl({ client_id: rp.clientId, post_logout_redirect_uri: bye, state: "stay-1" }));
  await page.getByRole("button", { name: "No, stay signed in" }).click();
  await page.waitForURL(bye + "**");
  expect(new URL(page.url()).searchParams.get("state")).toBe("stay-1");
  expect((await post("/oauth/v2/introspect", { token: tokens.access })).body.active).toBe(true);
  await page.goto(rp.authorizeUrl({ state: "st", prompt: "none" }));
  await page.waitForURL(rp.redirectUri + "**");
  expect(callbackParams(page.url()).code).toBeTruthy();
});

test("an id_token_hint and a client_id of different clients: an error page, still signed in", async ({ page }) => {
  const tokens = await signInAtRp(page);
  await page.goto(endSessionUrl({ id_token_hint: tokens.idToken, client_id: "someone-else", post_logout_redirect_uri: bye }));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sign-out cannot continue");
  await expect(page.locator("#error-message")).toContainText("two different applications");
  await page.goto(rp.authorizeUrl({ state: "pn", prompt: "none" }));
  await page.waitForURL(rp.redirectUri + "**");
  expect(callbackParams(page.url()).code).toBeTruthy();
});

test("ui_locales renders the confirmation page in that language, with the administrator's texts of it", async ({ page }) => {
  await signInAtRp(page);
  const set = (text: string | null) => adminApi("/texts/de", { method: "PUT", json: { texts: { "logout.confirm.submit": text } } });
  expect((await set("Jetzt abmelden")).status).toBe(200);
  try {
    await page.goto(endSessionUrl({ client_id: rp.clientId, ui_locales: "de" }));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Abmelden?");
    await expect(page.getByRole("button", { name: "Jetzt abmelden" })).toBeVisible();
  } finally {
    expect((await set(null)).status).toBe(200);
  }
});
