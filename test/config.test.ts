import { spawnSync } from "node:child_process";
import os from "node:os";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "@/lib/config";

function problem(env: Record<string, string>): ConfigError {
  try {
    parseConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error("expected a configuration error");
}

describe("configuration", () => {
  it("has the documented defaults", () => {
    const c = parseConfig({});
    expect(c.port).toBe(3000);
    expect(c.issuer).toBe("http://localhost:3000");
    expect(c.databaseUrl).toBeUndefined();
    expect(c.dataDir).toMatch(/\.data$/);
    expect(c.keyRotationIntervalSeconds).toBe(86_400);
    expect(c.jwksMaxAgeSeconds).toBe(300);
  });

  it("derives the issuer from PORT and strips a trailing slash from IDP_ISSUER", () => {
    expect(parseConfig({ PORT: "4000" }).issuer).toBe("http://localhost:4000");
    expect(parseConfig({ IDP_ISSUER: "https://id.example.com/" }).issuer).toBe("https://id.example.com");
  });

  it.each([
    [{ PORT: "abc" }, "PORT"],
    [{ PORT: "70000" }, "PORT"],
    [{ IDP_ISSUER: "ftp://id.example.com" }, "IDP_ISSUER"],
    [{ IDP_ISSUER: "https://id.example.com/?x=1" }, "IDP_ISSUER"],
    [{ DATABASE_URL: "mysql://localhost/db" }, "DATABASE_URL"],
    [{ IDP_MASTER_KEY: "too-short" }, "IDP_MASTER_KEY"],
    [{ IDP_ADMIN_PAT: "short" }, "IDP_ADMIN_PAT"],
    [{ IDP_KEY_ROTATION_INTERVAL: "5" }, "IDP_KEY_ROTATION_INTERVAL"],
    [{ IDP_TRUST_PROXY: "maybe" }, "IDP_TRUST_PROXY"],
    [{ IDP_TRUST_PROXY: "true" }, "IDP_TRUST_PROXY"],
    [{ IDP_TRUSTED_PROXIES: "10.0.0.0/33" }, "IDP_TRUSTED_PROXIES"],
    [{ IDP_TRUSTED_PROXIES: "10.0.0.0/8,proxy.local" }, "IDP_TRUSTED_PROXIES"],
    [{ IDP_TRUSTED_PROXIES: "::1/129" }, "IDP_TRUSTED_PROXIES"],
    [{ IDP_MAX_CONNECTIONS: "0" }, "IDP_MAX_CONNECTIONS"],
  ])("rejects %j naming %s", (env, variable) => {
    const e = problem(env);
    expect(e.variable).toBe(variable);
    expect(e.message).toMatch(new RegExp(`^Configuration error: ${variable} `));
  });

  it("IDP_TRUST_PROXY=true is refused with a message naming its replacement; false keeps its meaning", () => {
    expect(problem({ IDP_TRUST_PROXY: "true" }).message).toMatch(/IDP_TRUSTED_PROXIES/);
    expect(parseConfig({ IDP_TRUST_PROXY: "false" }).trustedProxies).toEqual([]);
  });

  it("reads IDP_TRUSTED_PROXIES as IPv4 and IPv6 addresses and CIDR blocks", () => {
    expect(parseConfig({ IDP_TRUSTED_PROXIES: "10.0.0.0/8, 127.0.0.1/32,::1,fd00::/8" }).trustedProxies).toEqual(["10.0.0.0/8", "127.0.0.1/32", "::1", "fd00::/8"]);
    expect(parseConfig({}).trustedProxies).toEqual([]);
  });

  it("IDP_WORKERS: 1 by default, a number or auto (one per core) on PostgreSQL, and more than one refused on PGlite", () => {
    expect(parseConfig({}).workers).toBe(1);
    const pg = { DATABASE_URL: "postgres://postgres@127.0.0.1:5432/torii" };
    expect(parseConfig({ ...pg, IDP_WORKERS: "3" }).workers).toBe(3);
    expect(parseConfig({ ...pg, IDP_WORKERS: "auto" }).workers).toBe(os.availableParallelism());
    expect(parseConfig({ IDP_WORKERS: "1" }).workers).toBe(1);
    for (const bad of ["0", "1.5", "many", "-2"]) expect(problem({ ...pg, IDP_WORKERS: bad }).variable).toBe("IDP_WORKERS");
    const refused = problem({ IDP_WORKERS: "2" });
    expect(refused.message).toMatch(/^Configuration error: IDP_WORKERS is 2, but the embedded PGlite database allows one process per data folder/);
    expect(refused.message).toContain("DATABASE_URL");
  });

  it("accepts a master key as hex or base64", () => {
    expect(parseConfig({ IDP_MASTER_KEY: "ab".repeat(32) }).masterKey).toHaveLength(32);
    expect(parseConfig({ IDP_MASTER_KEY: Buffer.alloc(32, 7).toString("base64") }).masterKey).toHaveLength(32);
  });

  it("stops start-up with one line naming the variable", () => {
    const r = spawnSync(process.execPath, ["node_modules/tsx/dist/cli.mjs", "server.ts"], {
      env: { PATH: process.env.PATH, PORT: "not-a-port" } as unknown as NodeJS.ProcessEnv,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Configuration error: PORT /);
  });

  it("stops start-up on the retired IDP_TRUST_PROXY with one line naming the replacement", () => {
    const r = spawnSync(process.execPath, ["node_modules/tsx/dist/cli.mjs", "server.ts"], {
      env: { PATH: process.env.PATH, IDP_TRUST_PROXY: "true" } as unknown as NodeJS.ProcessEnv,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Configuration error: IDP_TRUST_PROXY .*IDP_TRUSTED_PROXIES/);
  });
});
