import fs from "node:fs";
import path from "node:path";

/**
 * Lets Next start from the configuration `next build` resolved instead of running next.config.ts
 * again. Loading that file in production costs about 40 MB of resident memory for nothing: Next
 * compiles it with its native SWC binding, and the next-intl plugin it calls loads `@swc/core`
 * and a file watcher, none of which serves a request. The build writes the resolved configuration
 * to `<distDir>/required-server-files.json`; Next's own standalone server hands it over through
 * `__NEXT_PRIVATE_STANDALONE_CONFIG`, and so does this. What the file computes from the runtime
 * environment is not lost: its headers serve `next dev` only (create-server.ts sets every
 * response's security headers from the running issuer), and `distDir` is read the same way here.
 *
 * Returns whether the built configuration was found; without a build, Next loads the file as usual.
 */
export function adoptBuiltNextConfig(dir: string, env: Record<string, string | undefined> = process.env): boolean {
  if (env.__NEXT_PRIVATE_STANDALONE_CONFIG) return true;
  const file = path.join(dir, env.NEXT_DIST_DIR ?? ".next", "required-server-files.json");
  let config: unknown;
  try {
    config = (JSON.parse(fs.readFileSync(file, "utf8")) as { config?: unknown }).config;
  } catch {
    return false;
  }
  if (!config || typeof config !== "object") return false;
  env.__NEXT_PRIVATE_STANDALONE_CONFIG = JSON.stringify(config);
  return true;
}
