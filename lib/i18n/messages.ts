import de from "@/messages/de.json";
import en from "@/messages/en.json";
import fr from "@/messages/fr.json";
import it from "@/messages/it.json";
import { isLocale, type Locale } from "./locales";

/** The built-in message catalogs (messages/<locale>.json). */
export const CATALOGS: Record<Locale, Record<string, unknown>> = { en, de, fr, it };

/**
 * A message outside React (pages the protocol handlers render themselves), with `{name}`
 * placeholders filled in. `overrides` are the administrator's texts of the same locale
 * (lib/i18n/overrides.ts), keyed by catalog path. Falls back to English, then to the key, so a
 * gap never breaks a page.
 */
export function translate(
  locale: string,
  key: string,
  values: Record<string, string | number> = {},
  overrides: Record<string, string> = {},
): string {
  const lookup = (catalog: unknown) =>
    key.split(".").reduce<unknown>((node, part) => (node && typeof node === "object" ? (node as Record<string, unknown>)[part] : undefined), catalog);
  const found = overrides[key] ?? lookup(CATALOGS[isLocale(locale) ? locale : "en"]) ?? lookup(en);
  const text = typeof found === "string" ? found : key;
  return text.replace(/\{(\w+)\}/g, (m, name: string) => (name in values ? String(values[name]) : m));
}

/**
 * Whether the catalog behind next-intl's `t` has the message `key`, where `key` holds text from a
 * request or a name an administrator stored. `t.has` alone answers true for the names every
 * object inherits (`errors.__proto__`, `constructor`, `toString`…), and `t` then throws: such a
 * key has no message here.
 */
export function hasMessage(t: { has(key: never): boolean }, key: string): boolean {
  return !key.split(".").some((part) => part in Object.prototype) && t.has(key as never);
}
