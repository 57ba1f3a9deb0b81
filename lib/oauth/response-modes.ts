import type { ResponseMode } from "./params/authorize";
import { translate } from "@/lib/i18n/messages";
import { baseStyle, escapeHtml, htmlResponse, type Theme } from "./html";

/** The default response mode of a response type (OAuth 2.0 Multiple Response Type Encoding Practices). */
export function defaultResponseMode(responseType: string | undefined): ResponseMode {
  return responseType === "id_token" || responseType === "id_token token" ? "fragment" : "query";
}

/**
 * The response mode that applies: the requested one when it is valid for the response type,
 * else the default. Tokens never travel in a query string, so `query` with an implicit response
 * type counts as invalid and is ignored, like any unknown value.
 */
export function effectiveResponseMode(requested: string | undefined, responseType: string | undefined): ResponseMode {
  const implicit = responseType === "id_token" || responseType === "id_token token";
  if (requested === "form_post" || requested === "fragment") return requested;
  if (requested === "query" && !implicit) return "query";
  return defaultResponseMode(responseType);
}

export type ResponseContext = {
  redirectUri: string;
  mode: ResponseMode;
  lang: string;
  theme: Theme;
  /** The administrator's texts of `lang` for the form_post page (lib/i18n/overrides.ts). */
  texts?: Record<string, string>;
  headers?: Record<string, string>;
};

/** Delivers authorization response parameters (success or error) to the client's redirect URI. */
export function deliverAuthorizationResponse(ctx: ResponseContext, params: Record<string, string | undefined>): Response {
  const entries = Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined);
  if (ctx.mode === "form_post") return formPostResponse(ctx, entries);
  const url = new URL(ctx.redirectUri);
  const encoded = new URLSearchParams(entries);
  if (ctx.mode === "fragment") {
    url.hash = encoded.toString();
  } else {
    for (const [k, v] of entries) url.searchParams.append(k, v);
  }
  return new Response(null, {
    status: 302,
    headers: {
      Location: url.toString(),
      "Cache-Control": "no-store",
      Pragma: "no-cache",
      "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
      ...ctx.headers,
    },
  });
}

const FORM_POST_SCRIPT = `document.forms[0].submit();`;

/** OAuth 2.0 Form Post Response Mode: a page whose one script posts the form; the button covers no-script. */
function formPostResponse(ctx: ResponseContext, entries: [string, string][]): Response {
  const t = (key: string) => translate(ctx.lang, `authorize.${key}`, {}, ctx.texts);
  const inputs = entries.map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join("");
  const body =
    `<main><form method="post" action="${escapeHtml(ctx.redirectUri)}">${inputs}` +
    `<h1>${escapeHtml(t("formPostTitle"))}</h1><p>${escapeHtml(t("formPostText"))}</p>` +
    `<button type="submit">${escapeHtml(t("formPostContinue"))}</button></form></main>`;
  const target = new URL(ctx.redirectUri);
  // A CSP source expression cannot carry a query; the path pins the one allowed target.
  const formAction = /[\s;,']/.test(target.origin + target.pathname) ? "'self'" : target.origin + target.pathname;
  return htmlResponse({
    status: 200,
    lang: ctx.lang,
    title: t("formPostTitle"),
    body,
    style: baseStyle(ctx.theme),
    script: FORM_POST_SCRIPT,
    formAction,
    headers: ctx.headers,
  });
}
