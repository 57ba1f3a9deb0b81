import type { AbstractIntlMessages } from "next-intl";

/** The console namespaces its client components translate in the browser. */
const CLIENT_NAMESPACES = ["common", "branding"] as const;

/**
 * The console texts its client components translate in the browser: `console.common` (form.tsx:
 * the submit button's working state, the secret shown once, copy and download) and
 * `console.branding` (brand-preview.tsx). Everything else in the console renders on the server,
 * so the rest of the catalog (about 30 KB per language) stays there.
 */
export function consoleClientMessages(messages: AbstractIntlMessages): AbstractIntlMessages {
  const texts = messages.console as AbstractIntlMessages;
  return { console: Object.fromEntries(CLIENT_NAMESPACES.map((n) => [n, texts[n] ?? {}])) };
}
