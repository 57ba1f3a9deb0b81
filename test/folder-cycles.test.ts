import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script of the repository, without type declarations
import { folderCycles, libImports } from "../scripts/folder-cycles.mjs";

type Cycle = { units: string[]; examples: string[] };
const cyclesOf = folderCycles as (m: Map<string, string[]>) => Cycle[];

/** The lint step that keeps the core's folders free of import cycles (scripts/folder-cycles.mjs). */
describe("folder cycle check", () => {
  it("finds a cycle between two folders through their subfolders, and names an import of each direction", () => {
    const cycles = cyclesOf(
      new Map([
        ["lib/oauth/grants/code.ts", ["lib/login/steps.ts", "lib/oauth/tokens.ts"]],
        ["lib/login/handlers.ts", ["lib/oauth/form.ts"]],
        ["lib/store/users.ts", ["lib/crypto.ts"]],
      ]),
    );
    expect(cycles).toEqual([
      { units: ["lib/login", "lib/oauth"], examples: ["lib/login/handlers.ts -> lib/oauth/form.ts", "lib/oauth/grants/code.ts -> lib/login/steps.ts"] },
    ]);
  });

  it("counts a file directly in lib/ as a unit of its own, and imports inside one folder as none", () => {
    expect(cyclesOf(new Map([["lib/engine.ts", ["lib/store/x.ts"]], ["lib/store/x.ts", ["lib/store/y.ts", "lib/crypto.ts"]]]))).toEqual([]);
    expect(cyclesOf(new Map([["lib/engine.ts", ["lib/store/x.ts"]], ["lib/store/x.ts", ["lib/engine.ts"]]]))).toHaveLength(1);
  });

  it("the core has none", () => {
    expect(cyclesOf((libImports as () => Map<string, string[]>)())).toEqual([]);
  });
});
