import { LOCALES } from "@/lib/i18n/locales";
import { RESPONSE_MODES } from "./params/authorize";

/** What the authorization endpoint and the hosted login support, for the discovery document. */
export const AUTHORIZE_METADATA = {
  response_modes_supported: [...RESPONSE_MODES],
  // `consent` asks a third-party client's user again; a first-party client never shows a consent
  // screen, so for it `consent` changes nothing (registering it first-party is the administrative
  // consent OIDC Core 3.1.2.4 allows).
  prompt_values_supported: ["none", "login", "consent", "select_account", "create"],
  ui_locales_supported: [...LOCALES],
  code_challenge_methods_supported: ["S256"],
  display_values_supported: ["page"],
} as const;
