import type { Metadata } from "next";
import { NextIntlClientProvider, type AbstractIntlMessages } from "next-intl";
import { getLocale, getMessages } from "next-intl/server";
import { connection } from "next/server";
import { torii } from "@torii/core/runtime";
import { brandingVariables } from "@torii/core/login/branding";
import { getSettings } from "@torii/core/store/settings";
import { DEFAULT_BRANDING } from "@torii/core/store/settings";
import "./globals.css";

/** The browser tab says the brand's product name, as the pages themselves do. */
export async function generateMetadata(): Promise<Metadata> {
  await connection();
  return {
    title: (await branding()).productName || "Torii",
    description: "OpenID Connect identity provider",
    robots: { index: false, follow: false },
    // The instance logo, or a default icon in the brand's colour (lib/management/logo-endpoint.ts).
    icons: { icon: "/favicon.ico" },
  };
}

/** Engine branding for every page; the defaults when the database cannot be read. */
async function branding() {
  try {
    return (await getSettings(await torii())).branding;
  } catch {
    return DEFAULT_BRANDING;
  }
}

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  // Branding and locale are per request: never prerender with build-time values.
  await connection();
  const [locale, brand, messages] = await Promise.all([getLocale(), branding(), getMessages()]);
  return (
    <html lang={locale} data-theme={brand.darkMode} style={brandingVariables(brand)}>
      <body>
        {/* Only the error page's three texts go to the browser from here (app/error.tsx renders there
            when a page fails): pages render their texts on the server, and the few client
            components that translate get their own namespaces from their layout (the console's:
            consoleClientMessages). Passing the whole catalog made every page about 50 KB heavier. */}
        <NextIntlClientProvider messages={{ pageError: messages.pageError as AbstractIntlMessages }}>{children}</NextIntlClientProvider>
      </body>
    </html>
  );
}
