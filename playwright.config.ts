import { defineConfig } from "@playwright/test";

const port = Number(process.env.E2E_PORT ?? 3100);
export const E2E_BASE_URL = `http://localhost:${port}`;

/**
 * Browser tests drive Debian's Chromium (never a downloaded browser) against the production
 * build, started on a fresh data folder by scripts/e2e-server.mjs.
 */
export default defineConfig({
  testDir: "e2e",
  // npm test runs the suite twice (PGlite, then PostgreSQL): each run has its own report.
  outputDir: process.env.E2E_OUTPUT_DIR ?? "test-results/e2e",
  fullyParallel: false,
  workers: 1,
  // A flaky test is a defect to fix, not to hide behind a retry (also in CI).
  retries: 0,
  timeout: 60_000,
  reporter: [["list"], ["json", { outputFile: process.env.E2E_REPORT ?? "test-results/e2e.json" }]],
  use: {
    baseURL: E2E_BASE_URL,
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    },
  },
  projects: [{ name: "chromium", use: { browserName: "chromium" } }],
  webServer: {
    command: "node scripts/e2e-server.mjs",
    url: `${E2E_BASE_URL}/readyz`,
    reuseExistingServer: false,
    // A signal the server script can act on: it removes its data folder and PostgreSQL database.
    gracefulShutdown: { signal: "SIGTERM", timeout: 10_000 },
    timeout: 300_000,
    stdout: "pipe",
    stderr: "pipe",
    env: { E2E_PORT: String(port), ...(process.env.E2E_DATABASE_URL ? { E2E_DATABASE_URL: process.env.E2E_DATABASE_URL } : {}) },
  },
});
