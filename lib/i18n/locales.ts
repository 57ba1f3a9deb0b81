export const LOCALES = ["en", "de", "fr", "it"] as const;
export type Locale = (typeof LOCALES)[number];

export function isLocale(v: string): v is Locale {
  return (LOCALES as readonly string[]).includes(v);
}

/**
 * Keeps the locale chosen at the start of a flow (from `ui_locales`) for its later pages: set by
 * the authorization and end-session endpoints, read by lib/i18n/request.ts.
 */
export const LOCALE_COOKIE = "torii_locale";

/** The supported locale for a language tag: exact (`de`), or by primary subtag (`de-CH` -> `de`). */
function match(tag: string): Locale | undefined {
  const t = tag.trim().toLowerCase();
  if (isLocale(t)) return t;
  const primary = t.split("-")[0]!;
  return isLocale(primary) ? primary : undefined;
}

/** `Accept-Language` entries ordered by q-value (stable for ties), ignoring q=0 and `*`. */
function acceptLanguageTags(header: string): string[] {
  return header
    .split(",")
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(";");
      const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
      return { tag: tag!.trim(), q: q ? Number(q.slice(2)) : 1, i };
    })
    .filter((e) => e.tag && e.tag !== "*" && Number.isFinite(e.q) && e.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((e) => e.tag);
}

/**
 * The UI locale: the first supported entry of `ui_locales` (space-delimited, OIDC Core 3.1.2.1),
 * else the best supported `Accept-Language` entry, else the instance default.
 */
export function resolveLocale(opts: {
  uiLocales?: string | null;
  acceptLanguage?: string | null;
  defaultLocale?: string | null;
}): Locale {
  for (const tag of (opts.uiLocales ?? "").split(" ").filter(Boolean)) {
    const m = match(tag);
    if (m) return m;
  }
  for (const tag of acceptLanguageTags(opts.acceptLanguage ?? "")) {
    const m = match(tag);
    if (m) return m;
  }
  return opts.defaultLocale && isLocale(opts.defaultLocale) ? opts.defaultLocale : "en";
}

/**
 * The locale of a page: the one the visitor pinned with the language switcher (the value of
 * LOCALE_COOKIE), else resolveLocale's choice.
 */
export function pageLocale(opts: { pinned?: string | null; acceptLanguage?: string | null; defaultLocale?: string | null }): Locale {
  return opts.pinned && isLocale(opts.pinned) ? opts.pinned : resolveLocale(opts);
}
