import { translate } from "@/lib/i18n/messages";
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
