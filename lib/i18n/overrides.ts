import type { Caches } from "@/lib/store/caches";
import { mutate, type MutationScope } from "@/lib/store/invalidation";
import type { Executor, Tx } from "@/lib/db/client";
import { IntlMessageFormat } from "intl-messageformat";
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

type MessageElement = ReturnType<IntlMessageFormat["getAst"]>[number];

/** The ICU argument kinds by the parser's element type (`{a}`, `{a, number}`, `{a, plural, …}`…). */
const ARGUMENT_KINDS: Partial<Record<number, string>> = { 1: "plain", 2: "number", 3: "date", 4: "time", 5: "select", 6: "plural" };
/** Kinds whose values (numbers, strings) a plain `{a}` prints as they are. */
const PRINTABLE_PLAIN = new Set(["plain", "number", "select", "plural"]);

/** What a message uses: its arguments with the kinds they appear as, and its tags (`<b>…</b>`). */
type Usage = { args: Map<string, Set<string>>; tags: Set<string> };

/**
 * Parses `text` as next-intl does (intl-messageformat's parser, which use-intl formats every
 * message with; tags are not ignored): its usage, or the parser's error kind.
 */
function parseMessage(text: string, locale: string): Usage | { error: string } {
  let ast: MessageElement[];
  try {
    ast = new IntlMessageFormat(text, locale).getAst();
  } catch (e) {
    return { error: e instanceof Error ? e.message : "INVALID_MESSAGE" };
  }
  const usage: Usage = { args: new Map(), tags: new Set() };
  const walk = (elements: MessageElement[]) => {
    for (const el of elements) {
      const kind = ARGUMENT_KINDS[el.type];
      if (kind && "value" in el && typeof el.value === "string") {
        const kinds = usage.args.get(el.value) ?? new Set<string>();
        usage.args.set(el.value, kinds.add(kind));
      }
      if ("children" in el) {
        usage.tags.add(el.value);
        walk(el.children);
      }
      if ("options" in el) for (const option of Object.values(el.options)) walk(option.value);
    }
  };
  walk(ast);
  return usage;
}

/** Usage of the catalog's own texts, which are parsed once. */
const REFERENCE_USAGE = new Map<string, Usage>();

function referenceUsage(text: string, locale: string): Usage {
  let usage = REFERENCE_USAGE.get(text);
  if (!usage) {
    const parsed = parseMessage(text, locale);
    usage = "error" in parsed ? { args: new Map(), tags: new Set() } : parsed;
    REFERENCE_USAGE.set(text, usage);
  }
  return usage;
}

/** defaultTexts by locale; the catalogs never change while the process runs. */
const DEFAULTS = new Map<Locale, Map<string, string>>();

function defaultsOf(locale: Locale): Map<string, string> {
  let texts = DEFAULTS.get(locale);
  if (!texts) DEFAULTS.set(locale, (texts = defaultTexts(locale)));
  return texts;
}

/**
 * The defaults an override of `key` is checked against: the English one (the catalog the pages'
 * calls pass their values and tags for) and the locale's own; none for a key without a text.
 */
function referenceTexts(locale: Locale, key: string): { text: string; locale: Locale }[] {
  const en = defaultsOf("en").get(key);
  const own = locale === "en" ? undefined : defaultsOf(locale).get(key);
  return [
    ...(en === undefined ? [] : [{ text: en, locale: "en" as const }]),
    ...(own === undefined ? [] : [{ text: own, locale }]),
  ];
}

const QUOTING = "Use '{' and '}' to show a brace, '<' to show a tag's bracket, '' for an apostrophe next to them.";

/**
 * Why `value` cannot replace the text `key` of `locale`, or null: the one check of an override,
 * run when one is saved (management API and console) and again on every stored one before the
 * pages use it (cachedOverrides), so that what is accepted renders without a formatting error.
 * An override must be a valid ICU message (the syntax next-intl formats), and may use only the
 * arguments, as the same kind (a plain `{a}` also where the default counts or selects), and the
 * tags its default uses (the pages pass no others); it may leave any out.
 */
export function overrideProblem(locale: Locale, key: string, value: string): Problem | null {
  const references = referenceTexts(locale, key);
  if (!references.length) return problem("text_unknown_key", "No hosted page text has this key.");
  if (value.trim() === "") return problem("text_empty", "Must not be empty; reset the text to use the default.");
  if (value.length > 2000) return problem("too_long", "Must be at most 2000 characters.", { maximum: 2000 });
  const parsed = parseMessage(value, locale);
  if ("error" in parsed) {
    return parsed.error === "EXPECT_ARGUMENT_CLOSING_BRACE"
      ? problem("text_braces", `Has unbalanced braces { }. ${QUOTING}`)
      : problem("text_invalid", `Is not a valid message (${parsed.error}). ${QUOTING}`, { error: parsed.error });
  }
  const allowedArgs = new Map<string, Set<string>>();
  const allowedTags = new Set<string>();
  for (const r of references) {
    const usage = referenceUsage(r.text, r.locale);
    for (const [name, kinds] of usage.args) allowedArgs.set(name, new Set([...(allowedArgs.get(name) ?? []), ...kinds]));
    for (const tag of usage.tags) allowedTags.add(tag);
  }
  const braced = (names: Iterable<string>) => [...names].map((n) => `{${n}}`).join(", ");
  const unknown = braced([...parsed.args.keys()].filter((n) => !allowedArgs.has(n)));
  if (unknown) {
    const allowed = braced(allowedArgs.keys());
    return allowed
      ? problem("text_arguments", `Uses ${unknown}, which this text does not have (available: ${allowed}).`, { unknown, allowed })
      : problem("text_no_arguments", `Uses ${unknown}, but this text has no arguments.`, { unknown });
  }
  for (const [name, kinds] of parsed.args) {
    const expected = allowedArgs.get(name)!;
    const fits = (kind: string) => expected.has(kind) || (kind === "plain" && [...expected].some((k) => PRINTABLE_PLAIN.has(k)));
    const wrong = [...kinds].find((k) => !fits(k));
    if (wrong) {
      const as = [...expected].join(" or ");
      return problem("text_argument_type", `Uses {${name}} as ${wrong}, but this text has it as ${as}.`, { argument: `{${name}}`, kind: wrong, expected: as });
    }
  }
  const tags = [...parsed.tags].filter((tag) => !allowedTags.has(tag)).map((tag) => `<${tag}>`).join(", ");
  if (tags) {
    return problem("text_tags", `Uses the tag ${tags}, which this text does not have. Write '<' to show a bracket.`, { tags });
  }
  return null;
}

/** The overrides of `overrides` that pass overrideProblem; one stored before a check existed is left out, and its default shows. */
export function usableOverrides(locale: Locale, overrides: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(overrides).filter(([key, value]) => overrideProblem(locale, key, value) === null));
}

/**
 * The overrides of a locale the pages use, from the engine's cache (they are read on every login
 * page): only those that pass overrideProblem, checked once per cache load, so that a text stored
 * before a check existed shows its default instead of failing to format on every view.
 */
export function cachedOverrides(scope: { db: Executor; caches: Caches }, locale: Locale): Promise<Record<string, string>> {
  return scope.caches.textOverrides.get(locale, async () => usableOverrides(locale, await readOverrides(scope.db, locale)));
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
