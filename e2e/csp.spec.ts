import { expect, test } from "@playwright/test";

test("pages run only the scripts stamped with this response's nonce", async ({ page }) => {
  const violations: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  const first = await page.goto("/");
  const csp = first!.headers()["content-security-policy"]!;
  expect(csp).toContain("frame-ancestors 'none'");
  const scriptSrc = csp.split(";").map((d) => d.trim()).find((d) => d.startsWith("script-src"))!;
  expect(scriptSrc).not.toContain("'unsafe-inline'");
  const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
  expect(nonce).toBeTruthy();
  // Next stamped its inline scripts with that nonce, and the page hydrated without a violation.
  expect(await page.locator(`script[nonce]`).count()).toBeGreaterThan(0);
  await page.waitForLoadState("networkidle");
  expect(violations).toEqual([]);

  const second = await page.goto("/");
  const nonce2 = /'nonce-([^']+)'/.exec(second!.headers()["content-security-policy"]!)?.[1];
  expect(nonce2).not.toBe(nonce);
});

test("a request cannot choose its own policy", async ({ request }) => {
  const res = await request.get("/", { headers: { "content-security-policy": "script-src 'nonce-attacker'" } });
  expect(res.headers()["content-security-policy"]).not.toContain("nonce-attacker");
  expect(await res.text()).not.toContain('nonce="attacker"');
});
