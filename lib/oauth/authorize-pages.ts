import { LOCALE_COOKIE, pageLocale } from "@/lib/i18n/locales";
import { translate } from "@/lib/i18n/messages";
import { parseCookies } from "@/lib/session/cookies";
import { baseStyle, escapeHtml, htmlResponse, type Theme } from "./html";

const DEFAULT_THEME: Theme = { primaryColor: "#c2410c", backgroundColor: "#fafaf9", darkMode: "auto" };

/**
 * The error page of the authorization endpoint for requests whose redirect URI cannot be
 * trusted (RFC 6749 4.1.2.1): shown to the user, never redirected.
 */
export function authorizeErrorPage(opts: {
  status: number;
  locale: string;
  code: string;
  theme?: Theme;
  /** The administrator's texts of this locale (lib/i18n/overrides.ts). */
  texts?: Record<string, string>;
}): Response {
  const t = (key: string) => translate(opts.locale, `errors.${key}`, {}, opts.texts);
  const title = t("title");
  const body =
    `<main><h1>${escapeHtml(title)}</h1>` +
    `<p id="error-message">${escapeHtml(t(opts.code))}</p>` +
    `<p>${escapeHtml(t("advice"))}</p></main>`;
  return htmlResponse({ status: opts.status, lang: opts.locale, title, body, style: baseStyle(opts.theme ?? DEFAULT_THEME) });
}

/**
 * What a browser is shown when the database is out of reach under a handler that has no page of
 * its own for it, such as the authorization endpoint's callback (the pages' own notice is
 * app/error.tsx, with the same texts; the login forms send the browser to their error page): 503
 * with the caller's `Retry-After` header, in its language, nothing of the error.
 */
export function unavailablePage(opts: { cookie: string | null | undefined; acceptLanguage: string | null | undefined; headers: Readonly<Record<string, string>> }): Response {
  // No settings can be read: the browser's pinned language, else its own.
  const locale = pageLocale({ pinned: parseCookies(opts.cookie).get(LOCALE_COOKIE), acceptLanguage: opts.acceptLanguage });
  const t = (key: string) => translate(locale, `pageError.${key}`, {});
  const title = t("title");
  const body = `<main><h1>${escapeHtml(title)}</h1><p id="error-message">${escapeHtml(t("lead"))}</p></main>`;
  return htmlResponse({ status: 503, lang: locale, title, body, style: baseStyle(DEFAULT_THEME), headers: { ...opts.headers } });
}
