import { eq } from "drizzle-orm";
import { instanceSettings } from "@/db/schema";
import type { Branding, Features, Lifetimes, LockoutPolicy, PasswordPolicy, RateLimits, Retention } from "@/db/schema";
import type { Executor } from "@/lib/db/client";

export type Settings = typeof instanceSettings.$inferSelect;


export const DEFAULT_LIFETIMES: Lifetimes = {
  accessToken: 3600,
  idToken: 3600,
  refreshToken: 30 * 86_400,
  authCode: 60,
  sessionIdle: 86_400,
  sessionAbsolute: 30 * 86_400,
};
export const DEFAULT_FEATURES: Features = { tokenExchange: false, impersonation: false };
export const DEFAULT_BRANDING: Branding = {
  productName: "Torii",
  primaryColor: "#c2410c",
  backgroundColor: "#fafaf9",
  darkMode: "auto",
};
export const DEFAULT_LOCKOUT: LockoutPolicy = {
  windowSeconds: 3600,
  freeFailures: 5,
  addressFreeFailures: 100,
  maxDelaySeconds: 900,
  lockAfterFailures: 50,
  lockSeconds: 3600,
};
export const DEFAULT_RETENTION: Retention = { auditDays: 90 };
export const DEFAULT_PASSWORD_POLICY: PasswordPolicy = {
  minLength: 10,
  requireUppercase: false,
  requireLowercase: false,
  requireNumber: false,
  requireSymbol: false,
};
export const DEFAULT_RATE_LIMITS: RateLimits = { jwksPerMinute: 300, tokenPerMinute: 6000, registrationPerHour: 20 };
export const SUPPORTED_LOCALES = ["en", "de", "fr", "it"] as const;

export function defaultSettings(issuer: string, masterKeyCheck: string): typeof instanceSettings.$inferInsert {
  return {
    id: 1,
    primaryDomain: new URL(issuer).hostname,
    defaultLocale: "en",
    lifetimes: DEFAULT_LIFETIMES,
    features: DEFAULT_FEATURES,
    branding: DEFAULT_BRANDING,
    lockoutPolicy: DEFAULT_LOCKOUT,
    passwordPolicy: DEFAULT_PASSWORD_POLICY,
    rateLimits: DEFAULT_RATE_LIMITS,
    retention: DEFAULT_RETENTION,
    masterKeyCheck,
  };
}

/**
 * Settings are read on every protocol request, so they are cached for a few seconds per process.
 * Changes made through this process invalidate at once; other instances see them within TTL_MS.
 */
const TTL_MS = 3000;
const CACHE = Symbol.for("torii.settings.cache");
type G = typeof globalThis & { [CACHE]?: { at: number; value: Promise<Settings | undefined> } };

export async function readSettings(db: Executor): Promise<Settings | undefined> {
  const [row] = await db.select().from(instanceSettings).where(eq(instanceSettings.id, 1));
  return row;
}

export async function getSettings(db: Executor): Promise<Settings> {
  const g = globalThis as G;
  const c = g[CACHE];
  if (c && Date.now() - c.at < TTL_MS) {
    const v = await c.value;
    if (v) return v;
  }
  const value = readSettings(db);
  g[CACHE] = { at: Date.now(), value };
  const v = await value.catch((e) => {
    g[CACHE] = undefined;
    throw e;
  });
  if (!v) throw new Error("instance settings missing: the instance was not bootstrapped");
  return v;
}

export function invalidateSettings(): void {
  (globalThis as G)[CACHE] = undefined;
}

type Tx = Parameters<Parameters<Executor["transaction"]>[0]>[0];

/**
 * Runs `fn` in a transaction and drops the settings cache once it has committed. Dropping it
 * inside the transaction would not do: a request reading the settings before the commit refills
 * the cache with the old row, which then stays for TTL_MS.
 */
export async function mutateSettings<T>(db: Executor, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const result = await db.transaction(fn);
  invalidateSettings();
  return result;
}

/** Writes settings without touching the cache; call it inside mutateSettings. */
export async function writeSettings(
  db: Executor,
  patch: Partial<Omit<typeof instanceSettings.$inferInsert, "id" | "masterKeyCheck" | "createdAt">>,
): Promise<Settings> {
  const [row] = await db
    .update(instanceSettings)
    .set({ ...patch, updatedAt: new Date() })
    .where(eq(instanceSettings.id, 1))
    .returning();
  return row!;
}

/** A single settings write in its own transaction, visible to this process at once. */
export function updateSettings(db: Executor, patch: Parameters<typeof writeSettings>[1]): Promise<Settings> {
  return mutateSettings(db, (tx) => writeSettings(tx, patch));
}
