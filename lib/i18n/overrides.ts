import { and, eq, inArray } from "drizzle-orm";
import { textOverrides } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import de from "@/messages/de.json";
import en from "@/messages/en.json";
import fr from "@/messages/fr.json";
import it from "@/messages/it.json";
import { LOCALES, type Locale } from "./locales";

/**
 * Administrators may override the texts of the hosted login per locale (admin console, "Branding
 * and texts"). The overrides live in the database and are laid over messages/<locale>.json when
 * next-intl loads a request's messages, so every instance shows a change within a few seconds and
 * the instance that made it at once.
 */
export const OVERRIDABLE_NAMESPACE = "login";

const CATALOGS: Record<Locale, Record<string, unknown>> = { en, de, fr, it };

function flatten(node: unknown, prefix: string, out: Map<string, string>): Map<string, string> {
  if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (typeof node === "string") {
    out.set(prefix, node);
  }
  return out;
}

/** The overridable texts of a locale with their defaults, keyed below the `login` namespace. */
export function defaultTexts(locale: Locale): Map<string, string> {
  return flatten(CATALOGS[locale][OVERRIDABLE_NAMESPACE], "", new Map());
}

/** Names of the ICU arguments of a message (`{client}`, `{count, plural, ...}`). */
export function argumentNames(text: string): Set<string> {
  return new Set([...text.matchAll(/\{\s*([A-Za-z_]\w*)\s*[,}]/g)].map((m) => m[1]!));
}

/**
 * Why an override cannot replace a default, or null. An override may use only the arguments the
 * default has (the page passes no others, and next-intl would fail to format it) and must have
 * balanced braces (else it is no valid ICU message).
 */
export function overrideProblem(defaultText: string, value: string): string | null {
  if (value.trim() === "") return "Must not be empty; reset the text to use the default.";
  if (value.length > 2000) return "Must be at most 2000 characters.";
  let depth = 0;
  for (const ch of value) {
    if (ch === "{") depth++;
    else if (ch === "}" && --depth < 0) break;
  }
  if (depth !== 0) return "Has unbalanced braces { }.";
  const allowed = argumentNames(defaultText);
  const unknown = [...argumentNames(value)].filter((n) => !allowed.has(n));
  if (unknown.length) {
    return `Uses ${unknown.map((n) => `{${n}}`).join(", ")}, which this text does not have${
      allowed.size ? ` (available: ${[...allowed].map((n) => `{${n}}`).join(", ")})` : ""
    }.`;
  }
  return null;
}

const TTL_MS = 3000;
const CACHE = Symbol.for("torii.textOverrides.cache");
type G = typeof globalThis & { [CACHE]?: Map<string, { at: number; value: Promise<Record<string, string>> }> };

function cache() {
  const g = globalThis as G;
  return (g[CACHE] ??= new Map());
}

export async function readOverrides(db: Executor, locale: Locale): Promise<Record<string, string>> {
  const rows = await db
    .select({ key: textOverrides.key, value: textOverrides.value })
    .from(textOverrides)
    .where(eq(textOverrides.locale, locale));
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

/** The overrides of a locale, cached for a few seconds (they are read on every login page). */
export async function cachedOverrides(db: Executor, locale: Locale): Promise<Record<string, string>> {
  const c = cache();
  const hit = c.get(locale);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.value;
  const value = readOverrides(db, locale);
  c.set(locale, { at: Date.now(), value });
  return value.catch((err) => {
    c.delete(locale);
    throw err;
  });
}

export function invalidateOverrides(): void {
  cache().clear();
}

/** Sets (string) or resets (null) overrides of one locale. */
export async function writeOverrides(db: Executor, locale: Locale, changes: Record<string, string | null>): Promise<void> {
  const reset = Object.entries(changes).filter(([, v]) => v === null).map(([k]) => k);
  if (reset.length) {
    await db.delete(textOverrides).where(and(eq(textOverrides.locale, locale), inArray(textOverrides.key, reset)));
  }
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) continue;
    await db
      .insert(textOverrides)
      .values({ locale, key, value })
      .onConflictDoUpdate({ target: [textOverrides.locale, textOverrides.key], set: { value, updatedAt: new Date() } });
  }
  invalidateOverrides();
}

/** A copy of `messages` with the overrides laid over the `login` namespace. */
export function applyOverrides<T extends Record<string, unknown>>(messages: T, overrides: Record<string, string>): T {
  const keys = Object.keys(overrides);
  if (!keys.length) return messages;
  const copy = structuredClone(messages) as Record<string, unknown>;
  for (const key of keys) {
    const parts = [OVERRIDABLE_NAMESPACE, ...key.split(".")];
    let node = copy;
    for (const part of parts.slice(0, -1)) {
      const next = node[part];
      if (!next || typeof next !== "object") {
        node = {};
        break;
      }
      node = next as Record<string, unknown>;
    }
    const leaf = parts.at(-1)!;
    // Only texts that exist are replaced: a stale override of a removed key is ignored.
    if (typeof node[leaf] === "string") node[leaf] = overrides[key];
  }
  return copy as T;
}

export function isSupportedLocale(v: string): v is Locale {
  return (LOCALES as readonly string[]).includes(v);
}
