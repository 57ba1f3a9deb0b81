import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.dirname(fileURLToPath(import.meta.url)) } },
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    // One new PGlite data folder's image for every in-memory database of the run (test/global-setup.ts).
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { IDP_LOG_LEVEL: "silent" },
  },
});
