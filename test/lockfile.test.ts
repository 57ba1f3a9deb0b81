// `npm install` on a clean checkout must leave package-lock.json as committed: npm writes the
// `packages` map sorted by key, so the lock (and the script that completes it) must use that order.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

const committed = fs.readFileSync("package-lock.json", "utf8");

describe("package-lock.json", () => {
  it("lists its packages in the order npm install writes them", () => {
    const keys = Object.keys(JSON.parse(committed).packages as Record<string, unknown>);
    expect(keys).toEqual([...keys].sort((a, b) => a.localeCompare(b, "en")));
  });

  it("scripts/lock-optional-platforms.mjs restores missing platform builds in place and is a no-op on the committed lock", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-lock-"));
    try {
      const file = path.join(dir, "package-lock.json");
      const lock = JSON.parse(committed);
      const platform = Object.keys(lock.packages).filter((k) => /\/(@next\/swc|@swc\/core)-(darwin|win32)/.test(k));
      expect(platform.length).toBeGreaterThan(0);
      // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- a lock file's packages are a record keyed by path.
      for (const k of platform) delete lock.packages[k];
      fs.writeFileSync(file, JSON.stringify(lock, null, 2) + "\n");

      execFileSync(process.execPath, ["scripts/lock-optional-platforms.mjs", file]);
      expect(fs.readFileSync(file, "utf8")).toBe(committed);
      execFileSync(process.execPath, ["scripts/lock-optional-platforms.mjs", file]);
      expect(fs.readFileSync(file, "utf8")).toBe(committed);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
