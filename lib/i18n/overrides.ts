import type { Caches } from "@/lib/store/caches";
import { mutate, type MutationScope } from "@/lib/store/invalidation";
import type { Executor, Tx } from "@/lib/db/client";
import { problem, type Problem } from "@/lib/problem";
import { readOverrides } from "@/lib/store/text-overrides";
import { isLocale, type Locale } from "./locales";
import { CATALOGS } from "./messages";

/**
 * Administrators may override the texts of the hosted pages per locale (admin console, "Branding
 * and texts"): sign-in and registration (`login`), sign-out (`logout`), and the pages the
 * authorization endpoint renders itself (`errors`, `authorize`), and the mails (`mail`). The overrides live in the
 * database, keyed by their full catalog path (`login.loginName.title`), and are laid over
 * messages/<locale>.json when a page loads its messages, so every instance shows a change within
 * a few seconds and the instance that made it at once. The console's own texts are not
 * overridable: they are for administrators, not for the product's users.
 */
export const OVERRIDABLE_NAMESPACES = ["login", "logout", "errors", "authorize", "mail"] as const;

function flatten(node: unknown, prefix: string, out: Map<string, string>): Map<string, string> {
  if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (typeof node === "string") {
    out.set(prefix, node);
  }
  return out;
}

/** The overridable texts of a locale with their defaults, keyed by catalog path, in catalog order. */
export function defaultTexts(locale: Locale): Map<string, string> {
  const out = new Map<string, string>();
  for (const ns of OVERRIDABLE_NAMESPACES) flatten(CATALOGS[locale][ns], ns, out);
  return out;
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
export function overrideProblem(defaultText: string, value: string): Problem | null {
  if (value.trim() === "") return problem("text_empty", "Must not be empty; reset the text to use the default.");
  if (value.length > 2000) return problem("too_long", "Must be at most 2000 characters.", { maximum: 2000 });
  let depth = 0;
  for (const ch of value) {
    if (ch === "{") depth++;
    else if (ch === "}" && --depth < 0) break;
  }
  if (depth !== 0) return problem("text_braces", "Has unbalanced braces { }.");
  const allowed = [...argumentNames(defaultText)].map((n) => `{${n}}`).join(", ");
  const unknown = [...argumentNames(value)].filter((n) => !argumentNames(defaultText).has(n)).map((n) => `{${n}}`).join(", ");
  if (unknown) {
    return allowed
      ? problem("text_arguments", `Uses ${unknown}, which this text does not have (available: ${allowed}).`, { unknown, allowed })
      : problem("text_no_arguments", `Uses ${unknown}, but this text has no arguments.`, { unknown });
  }
  return null;
}

/** The overrides of a locale, from the engine's cache (they are read on every login page). */
export function cachedOverrides(scope: { db: Executor; caches: Caches }, locale: Locale): Promise<Record<string, string>> {
  return scope.caches.textOverrides.get(locale, () => readOverrides(scope.db, locale));
}

/**
 * The overrides for a page rendered outside next-intl (lib/oauth's own pages): none for an
 * unsupported locale, and none when the database cannot answer, so that the page still renders
 * with the catalog's texts.
 */
export async function pageOverrides(scope: { db: Executor; caches: Caches }, locale: string): Promise<Record<string, string>> {
  if (!isLocale(locale)) return {};
  return cachedOverrides(scope, locale).catch(() => ({}));
}

/** Runs `fn` in a transaction; the overrides cache is dropped everywhere once it has committed. */
export function mutateOverrides<T>(scope: MutationScope, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return mutate(scope, [{ cache: "textOverrides" }], fn);
}

/**
 * Merged catalogs by overrides object, then by catalog. cachedOverrides hands out the same
 * overrides object for a few seconds, so every page load in that time reuses one copy instead of
 * cloning the whole catalog; a new object after a change or expiry misses, and the old entries go
 * with their keys. Overrides objects are never mutated, which is what makes this sound.
 */
const MERGED = new WeakMap<Record<string, string>, WeakMap<Record<string, unknown>, Record<string, unknown>>>();

/** A copy of `messages` with the overrides laid over it; shared between callers, so read-only. */
export function applyOverrides<T extends Record<string, unknown>>(messages: T, overrides: Record<string, string>): T {
  if (!Object.keys(overrides).length) return messages;
  let byCatalog = MERGED.get(overrides);
  if (!byCatalog) MERGED.set(overrides, (byCatalog = new WeakMap()));
  let merged = byCatalog.get(messages);
  if (!merged) byCatalog.set(messages, (merged = merge(messages, overrides)));
  return merged as T;
}

function merge(messages: Record<string, unknown>, overrides: Record<string, string>): Record<string, unknown> {
  const keys = Object.keys(overrides);
  const copy = structuredClone(messages);
  for (const key of keys) {
    const parts = key.split(".");
    if (!(OVERRIDABLE_NAMESPACES as readonly string[]).includes(parts[0]!)) continue;
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
  return copy;
}
