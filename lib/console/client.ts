import type { Engine } from "@/lib/engine";
import { appRedirectUri, ensureAppClient, type FirstPartyApp } from "@/lib/first-party/app";

/**
 * The admin console, a first-party app (lib/first-party/app.ts): it signs administrators in as a
 * built-in public client with the code flow and PKCE, so it holds no password itself.
 */
export const CONSOLE_CLIENT_ID = "torii-console";
export const CONSOLE_PATH = "/ui/console";

export const CONSOLE_APP: FirstPartyApp = {
  clientId: CONSOLE_CLIENT_ID,
  name: "Torii Console",
  path: CONSOLE_PATH,
  cookie: "torii_console",
  loginCookie: "torii_console_login",
  // The console cookie outlives no working day.
  sessionMaxAgeSeconds: 12 * 3600,
};

export const consoleRedirectUri = (issuer: string) => appRedirectUri(issuer, CONSOLE_APP);

/** Registers (or repairs) the console client (lib/first-party/app.ts ensureAppClient). */
export async function ensureConsoleClient(inst: Engine): Promise<void> {
  await ensureAppClient(inst, CONSOLE_APP);
}
