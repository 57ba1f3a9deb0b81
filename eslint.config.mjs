// ESLint flat config: typescript-eslint's strict, type-checked rules and Next's rules, plus the
// structure of the code (docs/architecture.md): no import cycles, the core free of the framework,
// the edge reaching the core only through the compiled package. `npm run lint` runs it with
// zero warnings allowed; `npm test` runs it first.
import nextVitals from "eslint-config-next/core-web-vitals";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";
import { importX } from "eslint-plugin-import-x";
import tseslint from "typescript-eslint";

/** Browser-safe pure modules of the core that client components may bundle (no state, no I/O). */
const BROWSER_SAFE_CORE = ["@/lib/console/state", "@/lib/login/branding"];

export default tseslint.config(
  {
    ignores: ["node_modules/**", ".next/**", ".next-*/**", "dist/**", "test-results/**", "playwright-report/**", "bench/**", "db/migrations/**", "next-env.d.ts"],
  },
  ...nextVitals,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { "import-x": importX },
    settings: {
      // Resolves @/... through tsconfig paths, so that the cycle check follows the core's own imports.
      "import-x/resolver-next": [createTypeScriptImportResolver({ project: "./tsconfig.json" })],
      // `@/lib/...` looks like a scoped package; it is the core's own code (tsconfig paths).
      "import-x/internal-regex": "^@/",
      // Parse the imported TypeScript modules too, or the cycle check cannot follow them.
      "import-x/parsers": { "@typescript-eslint/parser": [".ts", ".tsx"] },
      "import-x/extensions": [".ts", ".tsx", ".js", ".mjs"],
    },
    rules: {
      // noUncheckedIndexedAccess makes `!` the explicit statement of an invariant the code holds
      // (a row just inserted, a match group that exists); banning it would only add noise.
      "@typescript-eslint/no-non-null-assertion": "off",
      // Numbers and booleans in template strings are fine; objects are not.
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true, allowBoolean: true }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    // Plain-JS scripts and config files are outside tsconfig.json (allowJs is off, and *.mts is not
    // in its include), so the type-aware rules have no types to work with there.
    files: ["**/*.mjs", "**/*.mts"],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Tests read JSON answers and decoded tokens, which are untyped by nature; asserting on them
    // through `any` is the point of the test, so the no-unsafe family stays off there.
    files: ["test/**/*.ts", "e2e/**/*.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-explicit-any": "off",
    },
  },
  {
    files: ["lib/**/*.ts"],
    rules: {
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["next", "next/*", "react", "react-dom", "next-intl", "next-intl/*"], message: "The core is framework-free (docs/architecture.md)." },
            { group: ["@/app/*", "@torii/core", "@torii/core/*"], message: "The core imports only itself, through @/lib/..." },
            { group: ["@/lib/runtime"], message: "Only the edge reads the process's engine; the core receives it as an argument." },
          ],
        },
      ],
    },
  },
  {
    // The core reads the time only from the engine's clock (lib/clock.ts), so that tests drive it.
    files: ["lib/**/*.ts"],
    ignores: ["lib/clock.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: "Read the time from the engine's clock (engine.clock / store.clock, lib/clock.ts), not Date.now().",
        },
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: "Read the time from the engine's clock (dateOf(engine.clock), lib/clock.ts), not new Date().",
        },
      ],
    },
  },
  {
    // Only storage builds queries: lib/store (one module per aggregate) and lib/db (the client).
    files: ["lib/**/*.ts"],
    ignores: ["lib/store/**", "lib/db/**"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@/db/*", "drizzle-orm", "drizzle-orm/*"],
              allowTypeImports: true,
              message: "Queries live in lib/store/<aggregate>.ts (docs/architecture.md); import the store function instead.",
            },
          ],
        },
      ],
    },
  },
  {
    // The protocol core works with the repositories the engine hands it (lib/store/repositories.ts),
    // never with storage functions or the database: its unit tests give it fakes.
    files: ["lib/oauth/**/*.ts", "lib/session/**/*.ts", "lib/login/steps.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@/lib/store/*", "@/lib/db/*", "@/db/*", "drizzle-orm", "drizzle-orm/*"],
              allowTypeImports: true,
              message: "The protocol core reaches storage through the engine's repositories (engine.store), not store functions or the database.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["app/**/*.ts", "app/**/*.tsx", "server.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: `^@/lib/(?!(${BROWSER_SAFE_CORE.map((m) => m.slice("@/lib/".length)).join("|")})$)`,
              message: "The edge imports the core through @torii/core/... so that the process loads it once (docs/architecture.md).",
            },
          ],
        },
      ],
    },
  },
);
