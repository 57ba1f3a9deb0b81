import { eq } from "drizzle-orm";
import { instanceSettings } from "@/db/schema";
import type { Branding, Features, Lifetimes, LockoutPolicy, PasswordPolicy, RateLimits } from "@/db/schema";
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
export const DEFAULT_LOCKOUT: LockoutPolicy = { maxFailures: 5, windowSeconds: 900 };
export const DEFAULT_PASSWORD_POLICY: PasswordPolicy = {
  minLength: 10,
  requireUppercase: false,
  requireLowercase: false,
  requireNumber: false,
  requireSymbol: false,
};
export const DEFAULT_RATE_LIMITS: RateLimits = { jwksPerMinute: 300, tokenPerMinute: 6000 };
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

export async function updateSettings(
  db: Executor,
  patch: Partial<Omit<typeof instanceSettings.$inferInsert, "id" | "masterKeyCheck" | "createdAt">>,
): Promise<Settings> {
  const [row] = await db
    .update(instanceSettings)
    .set({ ...patch, updatedAt: new Date() })
    .where(eq(instanceSettings.id, 1))
    .returning();
  invalidateSettings();
  return row!;
}
