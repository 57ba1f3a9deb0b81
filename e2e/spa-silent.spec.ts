// A single-page app without a refresh token renews its tokens the way oidc-client-ts does by
// default: `signinSilent()` loads the authorization endpoint with prompt=none in a hidden iframe.
// That carries Torii's browser cookie (SameSite=Lax) only when the app is on the same site as
// Torii (README, "Browser applications"): here the app is served on `localhost`, like Torii, on
// a port of its own. The same app on `127.0.0.1` is another site, and the browser sends the
// iframe no cookie, so the answer is login_required.
import { expect, test, type Page } from "@playwright/test";
import { createUser } from "./rp";
import { PASSWORD, signIn, uniqueName } from "./login-helpers";
import { serveSpa, spaPage } from "./spa-app";
import { adminApi, BASE_URL } from "./support";

/** The app: a UserManager without offline_access; /callback and /silent finish its requests. */
const appPage = (clientId: string) =>
  spaPage(
    clientId,
    `redirect_uri: location.origin + "/callback",
    silent_redirect_uri: location.origin + "/silent",
    response_type: "code",
    scope: "openid profile",
    automaticSilentRenew: false,
    silentRequestTimeoutInSeconds: 10,`,
    `if (location.pathname === "/callback") {
    window.mgr.signinRedirectCallback().then(
      () => { document.body.dataset.result = "signed-in"; },
      (err) => { document.body.dataset.result = "error"; document.body.textContent = "Error: " + err.message; },
    );
  }
  if (location.pathname === "/silent") window.mgr.signinSilentCallback();`,
  );

let app: Awaited<ReturnType<typeof serveSpa>>;
let clientId = "";
const sameSite = () => `http://localhost:${app.port}`;
const crossSite = () => app.origin;

test.beforeAll(async () => {
  app = await serveSpa(() => appPage(clientId));
  const res = await adminApi("/clients", {
    json: {
      name: "E2E single-page app, silent renewal",
      authMethod: "none",
      redirectUris: [sameSite(), crossSite()].flatMap((o) => [`${o}/callback`, `${o}/silent`]),
      grantTypes: ["authorization_code"],
      responseTypes: ["code"],
      accessTokenType: "opaque",
      allowedOrigins: [sameSite(), crossSite()],
    },
  });
  expect(res.status).toBe(201);
  clientId = ((await res.json()) as { clientId: string }).clientId;
});

test.afterAll(async () => {
  await app.close();
  await adminApi(`/clients/${clientId}`, { method: "DELETE" });
});

type Mgr = { signinRedirect(): Promise<void>; signinSilent(): Promise<{ access_token: string; profile: { sub: string } } | null>; getUser(): Promise<{ access_token: string; profile: { sub: string } } | null> };

async function signInFrom(page: Page, origin: string, user: string): Promise<void> {
  await page.goto(origin + "/");
  await page.evaluate(() => {
    void (window as unknown as { mgr: Mgr }).mgr.signinRedirect();
  });
  await page.waitForURL(BASE_URL + "/**");
  await signIn(page, user);
  await page.waitForURL(origin + "/callback**");
  await expect(page.locator("body")).toHaveAttribute("data-result", "signed-in");
}

const silently = (page: Page) =>
  page.evaluate(async () => {
    const mgr = (window as unknown as { mgr: Mgr }).mgr;
    const first = (await mgr.getUser())!;
    try {
      const renewed = (await mgr.signinSilent())!;
      return { ok: true, sameUser: renewed.profile.sub === first.profile.sub, fresh: renewed.access_token !== first.access_token };
    } catch (err) {
      return { ok: false, error: (err as { error?: string }).error ?? String(err) };
    }
  });

test("on Torii's site, signinSilent renews the tokens in a hidden iframe with prompt=none", async ({ page }) => {
  const user = uniqueName("silent");
  await createUser(user, PASSWORD);
  await signInFrom(page, sameSite(), user);
  expect(await silently(page)).toEqual({ ok: true, sameUser: true, fresh: true });
});

test("on another site, the browser sends the iframe no cookie: login_required", async ({ page }) => {
  const user = uniqueName("silentx");
  await createUser(user, PASSWORD);
  await signInFrom(page, crossSite(), user);
  expect(await silently(page)).toEqual({ ok: false, error: "login_required" });
});
