// A page asked for while the database is out of reach (a restart, a failover) shows a short
// notice in the browser's language, not Next's English default or an error, and "Try again"
// shows the page once the database is back. The server is a production one of its own, reaching
// PostgreSQL through a TCP proxy the test cuts (test/tcp-proxy.ts).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { onPostgresServer, POSTGRES_SERVER_URL } from "./support";
import { freePort } from "../test/process-support";
import { TcpProxy } from "../test/tcp-proxy";

const serverUrl = POSTGRES_SERVER_URL;
const catalog = (lang: string) => JSON.parse(fs.readFileSync(`messages/${lang}.json`, "utf8")) as { pageError: Record<string, string>; login: { error: { title: string } } };

test("a page while the database is out of reach: a notice in the browser's language, and the page again once it is back", async ({ browser }) => {
  test.skip(!serverUrl, "needs a PostgreSQL server (E2E_DATABASE_URL or TEST_DATABASE_URL)");
  test.setTimeout(120_000);
  const dbName = `torii_outage_${randomBytes(6).toString("hex")}`;
  await onPostgresServer(`CREATE DATABASE ${dbName}`);
  const direct = new URL(serverUrl!);
  const proxy = new TcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  await proxy.open();
  const viaProxy = new URL(serverUrl!);
  viaProxy.port = String(proxy.port);
  viaProxy.pathname = `/${dbName}`;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-outage-"));
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: "production", PORT: String(port), HOSTNAME: "127.0.0.1", IDP_ISSUER: base, IDP_DATA_DIR: dataDir, IDP_LOG_LEVEL: "silent", DATABASE_URL: viaProxy.toString() };
  delete env.IDP_ADMIN_PAT;
  const server = spawn(process.execPath, ["dist/server.mjs"], { env, stdio: "ignore", detached: true });
  try {
    await expect.poll(async () => (await fetch(base + "/readyz").catch(() => undefined))?.status, { timeout: 60_000 }).toBe(200);

    await proxy.cut();
    // German last: its "Try again" comes after the database is back. Cutting it again after that
    // would not do: what the page needs is then remembered until the instance sees the cut.
    for (const [lang, locale] of [["en", "en-US"], ["fr", "fr-FR"], ["it", "it-IT"], ["de", "de-DE"]] as const) {
      const texts = catalog(lang).pageError;
      const context = await browser.newContext({ locale });
      const page = await context.newPage();
      await page.goto(base + "/ui/login?authRequest=gone");
      await expect(page.getByRole("heading", { level: 1 })).toHaveText(texts.title!);
      await expect(page.locator(".auth-card")).toContainText(texts.lead!);
      await expect(page.locator("body")).not.toContainText(/ECONN|CONNECTION_|stack|This page couldn/);
      await page.screenshot({ path: `test-results/screenshots/db-outage-${lang}.png` });
      if (lang === "de") {
        await proxy.open();
        // The login page itself, which without its sign-in request says the sign-in cannot go on.
        await page.getByRole("button", { name: texts.retry! }).click();
        await expect(page.getByRole("heading", { level: 1 })).toHaveText(catalog(lang).login.error.title, { timeout: 15_000 });
      }
      await context.close();
    }
  } finally {
    try {
      process.kill(-server.pid!, "SIGKILL");
    } catch {
      // gone already
    }
    await proxy.cut().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
    await onPostgresServer(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  }
});
