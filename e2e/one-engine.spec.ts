import fs from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { adminApi } from "./support";

/**
 * server.ts serves the management API itself and hands pages to Next; both must use the one
 * engine of the process (docs/architecture.md, "The engine"). With two copies of the core, each
 * would have its own settings cache, and on PGlite its own database handle on one folder.
 */
test("a change through the API (server.ts) shows at once on a page Next renders: one engine, one cache", async ({ page }) => {
  await page.goto("/ui/login/error?code=expired");
  const before = (await (await adminApi("/branding")).json()).productName as string;
  await expect(page.locator(".brand").first()).toContainText(before);

  const name = `Shared ${Date.now() % 100000}`;
  const res = await adminApi("/branding", { method: "PUT", json: { productName: name } });
  expect(res.status).toBe(200);
  // Immediately, well inside the settings cache's lifetime: only a shared cache was dropped.
  await page.goto("/ui/login/error?code=expired");
  await expect(page.locator(".brand").first()).toContainText(name);

  expect((await adminApi("/branding", { method: "PUT", json: { productName: before } })).status).toBe(200);
});

test("Next's server build loads the core from node_modules/@torii/core instead of bundling it", () => {
  const dist = process.env.NEXT_DIST_DIR ?? ".next";
  const chunks: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".js")) chunks.push(p);
    }
  };
  walk(path.join(dist, "server"));
  let references = 0;
  for (const file of chunks) {
    const code = fs.readFileSync(file, "utf8");
    // A string only the core's cache invalidation contains: its presence would mean a second copy.
    expect(code.includes("torii_cache"), file).toBe(false);
    if (code.includes("@torii/core")) references++;
  }
  expect(references).toBeGreaterThan(0);
});
