import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { adoptBuiltNextConfig } from "@/lib/server/built-next-config";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function project(distDir: string, content: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-next-config-"));
  dirs.push(dir);
  fs.mkdirSync(path.join(dir, distDir), { recursive: true });
  fs.writeFileSync(path.join(dir, distDir, "required-server-files.json"), content);
  return dir;
}

describe("the built Next configuration", () => {
  const built = JSON.stringify({ version: 1, config: { distDir: ".next", poweredByHeader: false } });

  it("hands Next the configuration the build resolved", () => {
    const env: Record<string, string | undefined> = {};
    expect(adoptBuiltNextConfig(project(".next", built), env)).toBe(true);
    expect(JSON.parse(env.__NEXT_PRIVATE_STANDALONE_CONFIG!)).toEqual({ distDir: ".next", poweredByHeader: false });
  });

  it("reads it from NEXT_DIST_DIR, as next.config.ts places the build", () => {
    const dir = project("build-b", built);
    const env: Record<string, string | undefined> = { NEXT_DIST_DIR: "build-b" };
    expect(adoptBuiltNextConfig(dir, env)).toBe(true);
    expect(env.__NEXT_PRIVATE_STANDALONE_CONFIG).toContain('"poweredByHeader":false');
    expect(adoptBuiltNextConfig(dir, {})).toBe(false);
  });

  it("leaves Next to load next.config.ts when there is no build or the file is unreadable", () => {
    for (const content of ["", "{not json", JSON.stringify({ version: 1 }), JSON.stringify({ config: "x" })]) {
      const env: Record<string, string | undefined> = {};
      expect(adoptBuiltNextConfig(project(".next", content), env)).toBe(false);
      expect(env.__NEXT_PRIVATE_STANDALONE_CONFIG).toBeUndefined();
    }
  });

  it("keeps a configuration already given", () => {
    const env: Record<string, string | undefined> = { __NEXT_PRIVATE_STANDALONE_CONFIG: '{"given":true}' };
    expect(adoptBuiltNextConfig(project(".next", built), env)).toBe(true);
    expect(env.__NEXT_PRIVATE_STANDALONE_CONFIG).toBe('{"given":true}');
  });
});
