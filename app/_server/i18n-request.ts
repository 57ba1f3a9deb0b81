import { cookies, headers } from "next/headers";
import { getRequestConfig } from "next-intl/server";
import { torii } from "@torii/core/runtime";
import { getSettings } from "@torii/core/store/settings";
import { LOCALE_COOKIE, pageLocale } from "@torii/core/i18n/locales";
import { applyOverrides, cachedOverrides } from "@torii/core/i18n/overrides";

export default getRequestConfig(async () => {
  const [h, c] = await Promise.all([headers(), cookies()]);
  const locale = pageLocale({ pinned: c.get(LOCALE_COOKIE)?.value, acceptLanguage: h.get("accept-language"), defaultLocale: await instanceDefaultLocale() });
  const base = ((await import(`../../messages/${locale}.json`)) as { default: Record<string, unknown> }).default;
  return { locale, messages: await withTextOverrides(locale, base), ...(MARK_MISSING ? markMissing : {}) };
});

/**
 * In the browser tests (scripts/e2e-server.mjs sets TORII_MARK_MISSING_MESSAGES=1) a text missing
 * from a catalog shows as ⟦namespace.key⟧, which e2e/messages.spec.ts looks for on every page in
 * every language. Elsewhere next-intl's own fallback (the key) is shown and logged.
 */
const MARK_MISSING = process.env.TORII_MARK_MISSING_MESSAGES === "1";
const markMissing = {
  getMessageFallback: ({ namespace, key }: { namespace?: string; key: string }) => `⟦${namespace ? `${namespace}.` : ""}${key}⟧`,
  onError: () => {},
};

/**
 * The instance's default language, as the authorization and end-session endpoints use it, so
 * that pages reached without a pinned locale agree with them.
 */
async function instanceDefaultLocale(): Promise<string> {
  try {
    return (await getSettings(await torii())).defaultLocale;
  } catch {
    // As in withTextOverrides: the page must still render when the database is unreachable.
    return "en";
  }
}

/** The login texts administrators overrode for this locale (lib/i18n/overrides.ts), over the catalog. */
async function withTextOverrides(locale: Parameters<typeof cachedOverrides>[1], base: Record<string, unknown>) {
  try {
    return applyOverrides(base, await cachedOverrides(await torii(), locale));
  } catch {
    // A page must still render when the database is unreachable: the catalog's own texts.
    return base;
  }
}
