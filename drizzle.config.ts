import { defineConfig } from "drizzle-kit";

// Only used to generate migrations (`npm run db:generate`); they are applied at start-up by lib/db/migrate.ts.
export default defineConfig({
  dialect: "postgresql",
  schema: "./db/schema.ts",
  out: "./db/migrations",
});
