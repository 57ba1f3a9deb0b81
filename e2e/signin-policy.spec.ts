import { expect, test, type Page } from "@playwright/test";
import { createUser, RelyingParty } from "./rp";
import { callbackParams, enterPassword, PASSWORD, signIn, uniqueName } from "./login-helpers";

/**
 * The sign-in policy in the browser (lib/login/signin-policy.ts): an id_token_hint is never
 * answered for another user (OIDC Core 3.1.2.1), and max_age=0 takes exactly one sign-in, as
 * Apache mod_auth_openidc asks with `OIDCPathAuthRequestParams max_age=0`.
 */

let rp: RelyingParty;
let alice: { id: string; name: string };
let bob: { id: string; name: string };

test.beforeAll(async () => {
  rp = await RelyingParty.start();
  const a = uniqueName("alice");
  const b = uniqueName("bob");
  alice = { id: (await createUser(a, PASSWORD)).id, name: a };
  bob = { id: (await createUser(b, PASSWORD)).id, name: b };
});
test.afterAll(() => rp.stop());

/** An ID token of alice, as the relying party keeps it for a later id_token_hint. */
async function aliceIdToken(page: Page): Promise<string> {
  await page.goto(rp.authorizeUrl({ response_type: "id_token", nonce: "h" }));
  await signIn(page, alice.name);
  await page.waitForURL(rp.redirectUri + "**");
  return callbackParams(page.url()).id_token!;
}

/** Counts the sign-ins: the password forms the browser submits. */
function countSignIns(page: Page): () => number {
  let n = 0;
  page.on("request", (r) => {
    if (r.method() === "POST" && new URL(r.url()).pathname === "/ui/login/submit/password") n++;
  });
  return () => n;
}

test("id_token_hint names alice, bob signs in: no code for bob, a message, and alice's sign-in finishes", async ({ browser }) => {
  const first = await browser.newContext();
  const hint = await aliceIdToken(await first.newPage());
  await first.close();

  // Another browser, without any session.
  const ctx = await browser.newContext({ locale: "en-US" });
  const page = await ctx.newPage();
  const received = rp.received.length;
  await page.goto(rp.authorizeUrl({ id_token_hint: hint, state: "h1" }));
  await expect(page.locator('input[name="loginName"]')).toHaveValue(alice.name);
  await signIn(page, bob.name);
  await expect(page.locator("#form-error")).toHaveText(
    `You signed in as ${bob.name}, but E2E Relying Party asked for ${alice.name}. Sign in as ${alice.name} to continue.`,
  );
  await expect(page.locator('input[name="loginName"]')).toHaveValue(alice.name);
  // No account is created for the hinted request, and the relying party heard nothing.
  await expect(page.getByRole("link", { name: "Create an account" })).toHaveCount(0);
  expect(rp.received.length).toBe(received);

  await page.locator('button[type="submit"]').click();
  await enterPassword(page);
  await page.waitForURL(rp.redirectUri + "**");
  const p = callbackParams(page.url());
  expect(p.state).toBe("h1");
  const tokens = await rp.exchange(p.code!);
  expect((await rp.verifyIdToken(tokens.id_token as string)).sub).toBe(alice.id);

  // prompt=none in a browser holding only bob's session: login_required, never bob.
  const bobOnly = await browser.newContext();
  const bp = await bobOnly.newPage();
  await bp.goto(rp.authorizeUrl({}));
  await signIn(bp, bob.name);
  await bp.waitForURL(rp.redirectUri + "**");
  await bp.goto(rp.authorizeUrl({ id_token_hint: hint, prompt: "none", state: "h2" }));
  await bp.waitForURL(rp.redirectUri + "**");
  expect(callbackParams(bp.url())).toMatchObject({ error: "login_required", state: "h2" });
  await bobOnly.close();
  await ctx.close();
});

test("the wrong-account message is in the user's language", async ({ browser }) => {
  const first = await browser.newContext();
  const hint = await aliceIdToken(await first.newPage());
  await first.close();
  const ctx = await browser.newContext({ locale: "de-DE" });
  const page = await ctx.newPage();
  await page.goto(rp.authorizeUrl({ id_token_hint: hint }));
  await signIn(page, bob.name);
  await expect(page.locator("#form-error")).toHaveText(
    `Sie haben sich als ${bob.name} angemeldet, aber E2E Relying Party hat ${alice.name} angefordert. Melden Sie sich als ${alice.name} an, um fortzufahren.`,
  );
  await ctx.close();
});

test("mod_auth_openidc's flow shape: max_age=0, exactly one sign-in, a code, a fresh auth_time; again with a session", async ({ browser }) => {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const signIns = countSignIns(page);
  for (const round of [1, 2]) {
    // The second round holds a session from the first, older than max_age=0 allows.
    if (round === 2) await page.waitForTimeout(1100);
    const { verifier, challenge } = RelyingParty.pkce();
    const before = Math.floor(Date.now() / 1000);
    await page.goto(rp.authorizeUrl({ max_age: "0", state: `m${round}`, nonce: `n${round}`, code_challenge: challenge, code_challenge_method: "S256" }));
    if (round === 1) await signIn(page, alice.name);
    else await enterPassword(page);
    await page.waitForURL(rp.redirectUri + "**");
    const p = callbackParams(page.url());
    expect(p.state).toBe(`m${round}`);
    expect(signIns()).toBe(round);
    const tokens = await rp.exchange(p.code!, verifier);
    const claims = await rp.verifyIdToken(tokens.id_token as string, `n${round}`);
    expect(claims.sub).toBe(alice.id);
    expect(claims.auth_time).toBeGreaterThanOrEqual(before);
    expect(claims.auth_time).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
  }
  await ctx.close();
});
