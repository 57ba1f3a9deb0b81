// Compiles the core (lib/ and the schema in db/) into the package @torii/core under
// node_modules, which server.ts and Next's route modules both import. Node loads it once per
// process, so the custom server and the route handlers share one engine (docs/architecture.md).
//
// Why under node_modules and not an npm workspace: Turbopack bundles a symlinked workspace
// package into its own chunks even when `serverExternalPackages` names it (vercel/next.js
// #84388), which would give the process a second copy of the core; a package that really lives
// under node_modules is left to Node. `src` links back to lib/ so that TypeScript reads the
// sources' types; nothing resolves code through it.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.join(root, "node_modules", "@torii", "core");

function sources(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [p] : [];
  });
}

export async function buildCore({ quiet = false } = {}) {
  fs.rmSync(path.join(out, "dist"), { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  await build({
    absWorkingDir: root,
    entryPoints: sources(path.join(root, "lib")),
    outdir: path.join(out, "dist"),
    outbase: path.join(root, "lib"),
    outExtension: { ".js": ".mjs" },
    bundle: true,
    // One module instance per source file, shared by every entry point.
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    sourcemap: "linked",
    logLevel: "warning",
  });
  fs.writeFileSync(
    path.join(out, "package.json"),
    JSON.stringify(
      {
        name: "@torii/core",
        private: true,
        type: "module",
        exports: { "./*": { types: "./src/*.ts", default: "./dist/*.mjs" } },
      },
      null,
      2,
    ) + "\n",
  );
  const link = path.join(out, "src");
  fs.rmSync(link, { force: true, recursive: true });
  fs.symlinkSync(path.relative(out, path.join(root, "lib")), link, "dir");
  if (!quiet) console.log("Built node_modules/@torii/core");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildCore();
