import { cookies, headers } from "next/headers";
import { getRequestConfig } from "next-intl/server";
import { isLocale, resolveLocale } from "./locales";

/** Cookie that keeps the locale chosen at the start of a flow (from `ui_locales`) for its later pages. */
export const LOCALE_COOKIE = "torii_locale";

export default getRequestConfig(async () => {
  const [h, c] = await Promise.all([headers(), cookies()]);
  const pinned = c.get(LOCALE_COOKIE)?.value;
  const locale =
    pinned && isLocale(pinned) ? pinned : resolveLocale({ acceptLanguage: h.get("accept-language"), defaultLocale: "en" });
  return { locale, messages: (await import(`../../messages/${locale}.json`)).default };
});
