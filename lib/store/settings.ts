import { dateOf } from "@/lib/clock";
import { eq } from "drizzle-orm";
import { instanceSettings } from "@/db/schema";
import type { Branding, Features, Lifetimes, LockoutPolicy, PasswordPolicy, RateLimits, Retention } from "@/db/schema";
import type { Caches } from "@/lib/store/caches";
import { mutate, type MutationScope } from "@/lib/store/invalidation";
import type { Executor, Tx } from "@/lib/db/client";

export type Settings = typeof instanceSettings.$inferSelect;


export const DEFAULT_LIFETIMES: Lifetimes = {
  accessToken: 3600,
  idToken: 3600,
  refreshToken: 30 * 86_400,
  authCode: 60,
  sessionIdle: 86_400,
  sessionAbsolute: 30 * 86_400,
};
/** Upper bound of the authorization code lifetime (the management API refuses more; RFC 6749 4.1.2: 10 minutes at most). */
export const MAX_AUTH_CODE_SECONDS = 600;
/** Upper bound of the refresh token reuse interval (the management API refuses more). */
export const MAX_REFRESH_REUSE_INTERVAL_SECONDS = 60;


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

/** The settings row of a fresh instance (bootstrap). */
export async function insertSettings(db: Executor, row: typeof instanceSettings.$inferInsert): Promise<void> {
  await db.insert(instanceSettings).values(row);
}

export async function readSettings(db: Executor): Promise<Settings | undefined> {
  const [row] = await db.select().from(instanceSettings).where(eq(instanceSettings.id, 1));
  return row;
}

/**
 * The settings, from the engine's cache (lib/store/caches.ts): read on every protocol request,
 * dropped on every instance when a change commits (`mutateSettings`).
 */
export function getSettings(scope: { db: Executor; caches: Caches }): Promise<Settings> {
  // The cache's own promise, not an async wrapper around it: every request reads the settings.
  return scope.caches.settings.get("settings", async () => {
    const v = await readSettings(scope.db);
    if (!v) throw new Error("instance settings missing: the instance was not bootstrapped");
    return v;
  });
}

/** Runs `fn` in a transaction; the settings cache is dropped everywhere once it has committed. */
export function mutateSettings<T>(scope: MutationScope, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return mutate(scope, [{ cache: "settings" }], fn);
}

/** Writes settings without touching the cache; call it inside mutateSettings. */
export async function writeSettings(
  db: Executor,
  patch: Partial<Omit<typeof instanceSettings.$inferInsert, "id" | "masterKeyCheck" | "createdAt">>,
  now: Date,
): Promise<Settings> {
  const [row] = await db
    .update(instanceSettings)
    .set({ ...patch, updatedAt: now })
    .where(eq(instanceSettings.id, 1))
    .returning();
  return row!;
}

/** A single settings write in its own transaction, visible to every instance once committed. */
export function updateSettings(scope: MutationScope, patch: Parameters<typeof writeSettings>[1]): Promise<Settings> {
  return mutateSettings(scope, (tx) => writeSettings(tx, patch, dateOf(scope.clock)));
}

