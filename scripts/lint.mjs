// `npm run lint`: compiles the core package first (TypeScript and ESLint resolve @torii/core
// through it), then ESLint over the whole tree with zero warnings allowed, then the check that the
// core's folders import each other without cycles (scripts/folder-cycles.mjs).
import { spawnSync } from "node:child_process";
import { buildCore } from "./build-core.mjs";
import { folderCycles, libImports } from "./folder-cycles.mjs";

await buildCore({ quiet: true });
const r = spawnSync(process.execPath, ["node_modules/eslint/bin/eslint.js", "--max-warnings", "0", "."], { stdio: "inherit" });
if (r.status === 0) console.log("ESLint: no findings");
const cycles = folderCycles(libImports());
for (const c of cycles) {
  console.error(`Import cycle between the folders ${c.units.join(", ")} (docs/architecture.md, "The layers"):`);
  for (const e of c.examples) console.error(`  ${e}`);
}
if (!cycles.length) console.log("Folders of lib/: no import cycles");
process.exit(r.status === 0 && !cycles.length ? 0 : (r.status ?? 1) || 1);
