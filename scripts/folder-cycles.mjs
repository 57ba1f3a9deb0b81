// No import cycles between the core's folders (docs/architecture.md, "The layers"). ESLint's
// import-x/no-cycle checks modules; this checks the layers: each folder of lib/ (with its
// subfolders) is one unit, and each file directly in lib/ is one unit of its own. An import of any
// kind counts, `import type` too: a cycle of types is still two layers that each need the other.
// Imports are found and resolved by TypeScript's own scanner (ts.preProcessFile), with the
// project's one path alias, `@/` for the repository root.
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";

const ROOT = path.resolve(import.meta.dirname, "..");

/** The unit a file of lib/ belongs to: `lib/oauth` for lib/oauth/grants/x.ts, `lib/engine.ts` for itself. */
export function unitOf(file) {
  const parts = file.split("/");
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : file;
}

/** Cycles between units, given each file's imported files (repository-relative paths). */
export function folderCycles(importsByFile) {
  const edges = new Map();
  for (const [file, imports] of importsByFile) {
    const from = unitOf(file);
    for (const target of imports) {
      const to = unitOf(target);
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      const byTarget = edges.get(from);
      if (!byTarget.has(to)) byTarget.set(to, `${file} -> ${target}`);
    }
  }
  // Tarjan's strongly connected components; each one with more than one unit is a cycle.
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = [];
    for (;;) {
      const w = stack.pop();
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1) {
      const members = new Set(component);
      const examples = [];
      for (const a of component) for (const [b, example] of edges.get(a) ?? []) if (members.has(b)) examples.push(example);
      cycles.push({ units: component.sort(), examples: examples.sort() });
    }
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return cycles;
}

function resolve(fromFile, spec) {
  let base;
  if (spec.startsWith("@/")) base = spec.slice(2);
  else if (spec.startsWith(".")) base = path.posix.join(path.posix.dirname(fromFile), spec);
  else return undefined;
  for (const candidate of [`${base}.ts`, `${base}.tsx`, `${base}/index.ts`, base]) {
    if (fs.existsSync(path.join(ROOT, candidate)) && fs.statSync(path.join(ROOT, candidate)).isFile()) return candidate;
  }
  return undefined;
}

/** Each .ts file of lib/ with the files of lib/ it imports. */
export function libImports(dir = "lib") {
  const result = new Map();
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const file = path.posix.join(path.relative(ROOT, entry.parentPath).split(path.sep).join("/"), entry.name);
    const info = ts.preProcessFile(fs.readFileSync(path.join(ROOT, file), "utf8"), true, true);
    const targets = info.importedFiles.map((f) => resolve(file, f.fileName)).filter((t) => t?.startsWith("lib/"));
    result.set(file, targets);
  }
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cycles = folderCycles(libImports());
  for (const c of cycles) {
    console.error(`Import cycle between ${c.units.join(", ")}:`);
    for (const e of c.examples) console.error(`  ${e}`);
  }
  if (cycles.length) process.exit(1);
  console.log("Folders of lib/: no import cycles");
}
