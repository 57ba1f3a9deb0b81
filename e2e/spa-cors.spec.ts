// A single-page app on its own origin, using the real oidc-client-ts in Chromium: sign-in with
// code + PKCE, refresh, userinfo and revocation all cross-origin (README, "Browser
// applications"); the same app on an origin the client does not allow is blocked by the browser.
import { expect, test, type Page } from "@playwright/test";
import { createUser } from "./rp";
import { PASSWORD, signIn, uniqueName } from "./login-helpers";
import { serveSpa, spaPage } from "./spa-app";
import { adminApi, BASE_URL } from "./support";

/** The app: a UserManager that keeps its user in localStorage, and the callback page that finishes the sign-in. */
const appPage = (clientId: string) =>
  spaPage(
    clientId,
    `redirect_uri: location.origin + "/callback",
    response_type: "code",
    scope: "openid profile email offline_access",
    loadUserInfo: true,
    automaticSilentRenew: false,
    userStore: new oidc.WebStorageStateStore({ store: window.localStorage }),`,
    `if (location.pathname === "/callback") {
    window.mgr.signinRedirectCallback().then(
      (user) => { document.body.dataset.result = "signed-in"; document.body.textContent = "Signed in as " + user.profile.preferred_username; },
      (err) => { document.body.dataset.result = "error"; document.body.textContent = "Error: " + err.message; },
    );
  }`,
  );
const serveApp = (clientId: () => string) => serveSpa(() => appPage(clientId()));

let allowed: Awaited<ReturnType<typeof serveApp>>;
let elsewhere: Awaited<ReturnType<typeof serveApp>>;
let clientId = "";
let user: string;

test.beforeAll(async () => {
  allowed = await serveApp(() => clientId);
  elsewhere = await serveApp(() => clientId);
  // A public client (PKCE, no secret), as a single-page app is. Both apps may receive the code,
  // but only the first origin may read the endpoints' answers.
  const res = await adminApi("/clients", {
    json: {
      name: "E2E single-page app",
      authMethod: "none",
      redirectUris: [`${allowed.origin}/callback`, `${elsewhere.origin}/callback`],
      grantTypes: ["authorization_code", "refresh_token"],
      responseTypes: ["code"],
      accessTokenType: "opaque",
      allowedOrigins: [allowed.origin],
    },
  });
  expect(res.status).toBe(201);
  clientId = ((await res.json()) as { clientId: string }).clientId;
  user = uniqueName("spa");
  await createUser(user, PASSWORD);
});

test.afterAll(async () => {
  await allowed.close();
  await elsewhere.close();
  await adminApi(`/clients/${clientId}`, { method: "DELETE" });
});

async function signInFrom(page: Page, origin: string): Promise<void> {
  await page.goto(origin + "/");
  // It fetches discovery, then navigates away: not awaited inside the page, whose context ends.
  await page.evaluate(() => {
    void (window as unknown as { mgr: { signinRedirect(): Promise<void> } }).mgr.signinRedirect();
  });
  await page.waitForURL(BASE_URL + "/**");
  await signIn(page, user);
  await page.waitForURL(origin + "/callback**");
  await expect(page.locator("body[data-result]:not([data-result=''])")).toBeVisible();
}

test("oidc-client-ts on an allowed origin: sign-in with code + PKCE, userinfo, refresh and revocation all work cross-origin", async ({ page }) => {
  await signInFrom(page, allowed.origin);
  await expect(page.locator("body")).toHaveAttribute("data-result", "signed-in");
  await expect(page.locator("body")).toHaveText(new RegExp(`^Signed in as ${user}@`)); // preferred_username: login name@primary domain

  type Mgr = {
    getUser(): Promise<{ access_token: string; refresh_token?: string; profile: Record<string, unknown> } | null>;
    signinSilent(): Promise<{ access_token: string; refresh_token?: string } | null>;
    revokeTokens(types?: string[]): Promise<void>;
    settings: { metadata?: unknown };
    metadataService: { getUserInfoEndpoint(): Promise<string> };
  };
  const result = await page.evaluate(async () => {
    const mgr = (window as unknown as { mgr: Mgr }).mgr;
    const first = (await mgr.getUser())!;
    // userinfo from the page itself (loadUserInfo already did once during the sign-in).
    const endpoint = await mgr.metadataService.getUserInfoEndpoint();
    const info = (await (await fetch(endpoint, { headers: { authorization: `Bearer ${first.access_token}` } })).json()) as Record<string, unknown>;
    // With a refresh token, signinSilent uses the refresh_token grant (no iframe).
    const renewed = (await mgr.signinSilent())!;
    const rotated = renewed.refresh_token !== first.refresh_token && renewed.access_token !== first.access_token;
    await mgr.revokeTokens(["access_token", "refresh_token"]);
    const afterRevoke = await fetch(endpoint, { headers: { authorization: `Bearer ${renewed.access_token}` } }).then(
      (r) => r.status,
      () => "blocked",
    );
    return { sub: first.profile.sub, infoSub: info.sub, hadRefresh: !!first.refresh_token, rotated, afterRevoke, refresh: renewed.refresh_token };
  });
  expect(result.hadRefresh).toBe(true);
  expect(result.infoSub).toBe(result.sub);
  expect(result.rotated).toBe(true);
  // Revoked: the token names no client any more, but the refusal is readable from a registered
  // client's origin, so the app sees the 401 (and can sign in again) rather than a network error.
  expect(result.afterRevoke).toBe(401);

  // The revoked refresh token no longer works (asked from Node, outside any browser).
  expect(result.refresh).toBeTruthy();
  const r = await fetch(BASE_URL + "/oauth/v2/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: result.refresh!, client_id: clientId }).toString(),
  });
  expect(r.status).toBe(400);
  expect(((await r.json()) as { error: string }).error).toBe("invalid_grant");
});

test("the same app on an origin the client does not allow: the browser blocks the code exchange", async ({ page }) => {
  const blocked: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && /CORS|Access-Control-Allow-Origin/.test(m.text())) blocked.push(m.text());
  });
  await signInFrom(page, elsewhere.origin);
  await expect(page.locator("body")).toHaveAttribute("data-result", "error");
  expect(blocked.join("\n")).toMatch(/\/oauth\/v2\/token/);
  expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("oidc.user")).length)).toBe(0);
});

test("the hosted login pages send no CORS header", async () => {
  const res = await fetch(BASE_URL + "/ui/login", { headers: { origin: "http://127.0.0.1:9" } });
  expect(res.headers.get("access-control-allow-origin")).toBeNull();
});
