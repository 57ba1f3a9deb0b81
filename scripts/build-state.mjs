// Whether the production build is older than the sources it was made from.
import fs from "node:fs";
import path from "node:path";

const SOURCES = ["app", "lib", "db", "messages", "server.ts", "next.config.ts", "package.json", "package-lock.json", "tsconfig.json"];
const OUTPUTS = [`${process.env.NEXT_DIST_DIR ?? ".next"}/BUILD_ID`, "dist/server.mjs", "node_modules/@torii/core/package.json"];

function newest(p) {
  if (!fs.existsSync(p)) return 0;
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let m = st.mtimeMs;
  for (const e of fs.readdirSync(p)) m = Math.max(m, newest(path.join(p, e)));
  return m;
}

export function buildIsStale(root = process.cwd()) {
  const outs = OUTPUTS.map((o) => path.join(root, o));
  if (outs.some((o) => !fs.existsSync(o))) return true;
  const built = Math.min(...outs.map((o) => fs.statSync(o).mtimeMs));
  return SOURCES.some((s) => newest(path.join(root, s)) > built);
}
