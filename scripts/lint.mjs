// `npm run lint`: compiles the core package first (TypeScript and ESLint resolve @torii/core
// through it), then ESLint over the whole tree with zero warnings allowed.
import { spawnSync } from "node:child_process";
import { buildCore } from "./build-core.mjs";

await buildCore({ quiet: true });
const r = spawnSync(process.execPath, ["node_modules/eslint/bin/eslint.js", "--max-warnings", "0", "."], { stdio: "inherit" });
if (r.status === 0) console.log("ESLint: no findings");
process.exit(r.status ?? 1);
