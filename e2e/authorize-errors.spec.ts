import { expect, test } from "@playwright/test";
import { RelyingParty } from "./rp";

/**
 * A relying party that asked for form_post gets its authorization errors as a form POST in the
 * browser, never in a query string, also when it asked for form_post only inside an unsigned
 * request object (which Torii refuses with request_not_supported).
 */
let rp: RelyingParty;

test.beforeAll(async () => {
  rp = await RelyingParty.start();
});
test.afterAll(async () => {
  await rp.stop();
});

/** An unsigned request object (`alg: none`, OIDC Core 6.1) with the given claims. */
function unsignedRequestObject(claims: Record<string, unknown>): string {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  return `${b64({ alg: "none" })}.${b64(claims)}.`;
}

async function expectPostedError(page: import("@playwright/test").Page, before: number, error: string, state: string) {
  await page.waitForURL(rp.redirectUri);
  await expect(page.locator("h1")).toHaveText("Relying party callback");
  expect(new URL(page.url()).search).toBe("");
  expect(new URL(page.url()).hash).toBe("");
  const received = rp.received.slice(before);
  // Nothing reached the relying party in a query string; the error came as a POST body.
  expect(received.filter((r) => r.method === "GET")).toEqual([]);
  const posted = received.find((r) => r.method === "POST")!;
  expect(posted.path).toBe("/cb");
  expect(posted.params.error).toBe(error);
  expect(posted.params.error_description).toBeTruthy();
  expect(posted.params.state).toBe(state);
  expect(posted.params.code).toBeUndefined();
}

test("form_post asked for only inside an unsigned request object: request_not_supported is POSTed to the RP", async ({ page }) => {
  const before = rp.received.length;
  const request = unsignedRequestObject({ client_id: rp.clientId, response_type: "code", response_mode: "form_post", scope: "openid" });
  await page.goto(rp.authorizeUrl({ state: "ro-1", request }));
  await expectPostedError(page, before, "request_not_supported", "ro-1");
});

test("form_post with a malformed claims parameter: invalid_request is POSTed to the RP with the state", async ({ page }) => {
  const before = rp.received.length;
  await page.goto(rp.authorizeUrl({ state: "cl-1", response_mode: "form_post", claims: '{"userinfo": {"name": ' }));
  await expectPostedError(page, before, "invalid_request", "cl-1");
});

test("form_post with an implicit response type and request_uri: request_uri_not_supported is POSTed", async ({ page }) => {
  const before = rp.received.length;
  await page.goto(
    rp.authorizeUrl({ state: "ru-1", response_type: "id_token", nonce: "n", response_mode: "form_post", request_uri: "https://rp.example/req.jwt" }),
  );
  await expectPostedError(page, before, "request_uri_not_supported", "ru-1");
});
