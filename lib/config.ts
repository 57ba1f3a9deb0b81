import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { parseTrustedProxies } from "@/lib/http/client-address";

/**
 * Process configuration, read once from the environment and validated with zod.
 * A wrong value stops start-up with one line naming the variable (see `ConfigError`).
 */

const port = z.coerce
  .number({ error: "must be a number" })
  .int("must be a whole number")
  .min(1, "must be between 1 and 65535")
  .max(65535, "must be between 1 and 65535");

const seconds = (min: number) =>
  z.coerce.number({ error: "must be a number of seconds" }).int("must be a whole number of seconds").min(min, `must be at least ${min}`);

const envSchema = z.object({
  PORT: port.default(3000),
  HOSTNAME: z.string().min(1).default("0.0.0.0"),
  IDP_ISSUER: z
    .url({ protocol: /^https?$/, error: "must be an absolute http(s) URL" })
    .refine((v) => {
      const u = new URL(v);
      return !u.search && !u.hash;
    }, "must not have a query or fragment (OpenID Connect Discovery 1.0 section 3)")
    .optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
    .optional(),
  IDP_DATA_DIR: z.string().min(1).default("./.data"),
  IDP_MASTER_KEY: z
    .string()
    .refine((v) => decodeKey(v) !== null, "must be 32 bytes as 64 hex characters or base64")
    .optional(),
  IDP_ADMIN_PAT: z.string().min(32, "must be at least 32 characters").max(512).optional(),
  IDP_KEY_ROTATION_INTERVAL: seconds(60).default(86_400),
  IDP_JWKS_MAX_AGE: seconds(0).default(300),
  // Replaced by IDP_TRUSTED_PROXIES: "true" trusted whatever X-Forwarded-For a client sent.
  // "false" keeps its safe meaning (no proxy trusted); anything else stops start-up.
  IDP_TRUST_PROXY: z
    .enum(["false", "0"], {
      error: "is no longer supported: list your proxies in IDP_TRUSTED_PROXIES (comma-separated addresses or CIDRs)",
    })
    .optional(),
  IDP_TRUSTED_PROXIES: z
    .string()
    .superRefine((v, ctx) => {
      const r = parseTrustedProxies(v);
      if ("invalid" in r) ctx.addIssue({ code: "custom", message: `has ${JSON.stringify(r.invalid)}, which is not an IP address or CIDR block` });
    })
    .default(""),
  IDP_MAX_CONNECTIONS: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .default(2048),
  IDP_SMTP_URL: z
    .url({ protocol: /^smtps?$/, error: "must be smtp://user:password@host:port or smtps://… (TLS)" })
    .refine((v) => new URL(v).hostname !== "", "must name a host")
    .optional(),
  IDP_SMTP_FROM: z.string().trim().min(3).max(320).optional(),
  IDP_SMTP_CA_FILE: z.string().trim().min(1).optional(),
  IDP_LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
  IDP_WORKERS: z
    .union([z.literal("auto"), z.coerce.number({ error: 'must be a number or "auto"' }).int("must be a whole number").min(1, "must be at least 1").max(256, "must be at most 256")], {
      error: 'must be a number or "auto"',
    })
    .default(1),
});

export type Config = {
  port: number;
  hostname: string;
  issuer: string;
  databaseUrl: string | undefined;
  dataDir: string;
  /** Worker processes sharing the port (IDP_WORKERS; "auto" = the number of cores). */
  workers: number;
  masterKey: Buffer | undefined;
  adminPat: string | undefined;
  keyRotationIntervalSeconds: number;
  jwksMaxAgeSeconds: number;
  /** Addresses and CIDR blocks of the proxies whose X-Forwarded-For is believed (lib/http/client-address.ts). */
  trustedProxies: string[];
  /** Open HTTP connections at most (lib/server/limits.ts). */
  maxConnections: number;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /**
   * The mail server from the environment (IDP_SMTP_URL, sender IDP_SMTP_FROM); it takes
   * precedence over the console's settings (lib/mail/transport.ts).
   */
  smtp: { url: string; from: string | undefined } | undefined;
  /**
   * Certificates (PEM) to trust for the mail server's TLS, besides the system's: a private mail
   * server's own CA (IDP_SMTP_CA_FILE, read at start-up). Applies to IDP_SMTP_URL and to the
   * console's mail settings.
   */
  smtpCa?: string;
  /** Tests only: keep PGlite in memory instead of in the data folder. */
  inMemory?: boolean;
  /** Tests only, with `inMemory`: a new data folder's tar to start from (lib/db/pglite-thread.ts). */
  inMemoryImage?: string;
};

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly problem: string,
  ) {
    super(`Configuration error: ${variable} ${problem}`);
  }
}

/** Accepts 64 hex characters or base64/base64url of exactly 32 bytes. */
export function decodeKey(value: string): Buffer | null {
  const v = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(v)) return Buffer.from(v, "hex");
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(v)) {
    const b = Buffer.from(v.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    if (b.length === 32) return b;
  }
  return null;
}

export function parseConfig(env: Record<string, string | undefined>): Config {
  // Empty strings count as unset: that is how shells and compose files usually say "no value".
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const result = envSchema.safeParse(cleaned);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new ConfigError(String(issue.path[0] ?? "environment"), issue.message);
  }
  const e = result.data;
  const issuer = (e.IDP_ISSUER ?? `http://localhost:${e.PORT}`).replace(/\/+$/, "");
  const workers = e.IDP_WORKERS === "auto" ? os.availableParallelism() : e.IDP_WORKERS;
  // PGlite is an embedded database: one process owns its data folder. Several workers need a
  // database server they can all connect to.
  if (workers > 1 && !e.DATABASE_URL) {
    throw new ConfigError(
      "IDP_WORKERS",
      `is ${e.IDP_WORKERS}${e.IDP_WORKERS === "auto" ? ` (${workers} cores)` : ""}, but the embedded PGlite database allows one process per data folder: set DATABASE_URL to a PostgreSQL server to run several workers, or use IDP_WORKERS=1`,
    );
  }
  return {
    port: e.PORT,
    hostname: e.HOSTNAME,
    issuer,
    databaseUrl: e.DATABASE_URL,
    dataDir: path.resolve(e.IDP_DATA_DIR),
    masterKey: e.IDP_MASTER_KEY ? decodeKey(e.IDP_MASTER_KEY)! : undefined,
    adminPat: e.IDP_ADMIN_PAT,
    keyRotationIntervalSeconds: e.IDP_KEY_ROTATION_INTERVAL,
    jwksMaxAgeSeconds: e.IDP_JWKS_MAX_AGE,
    trustedProxies: (parseTrustedProxies(e.IDP_TRUSTED_PROXIES) as { entries: string[] }).entries,
    maxConnections: e.IDP_MAX_CONNECTIONS,
    logLevel: e.IDP_LOG_LEVEL,
    smtp: e.IDP_SMTP_URL ? { url: e.IDP_SMTP_URL, from: e.IDP_SMTP_FROM } : undefined,
    smtpCa: e.IDP_SMTP_CA_FILE ? readCaFile(e.IDP_SMTP_CA_FILE) : undefined,
    workers,
  };
}

/** The configuration of this process's environment (`parseConfig` of `process.env` by default). */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  return parseConfig(env);
}

/** The PEM certificates of IDP_SMTP_CA_FILE; a missing or unreadable file stops the start. */
function readCaFile(file: string): string {
  let pem: string;
  try {
    pem = fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError("IDP_SMTP_CA_FILE", `cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"}): ${file}`);
  }
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) throw new ConfigError("IDP_SMTP_CA_FILE", `holds no PEM certificate: ${file}`);
  return pem;
}
