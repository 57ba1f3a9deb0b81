import type { NextConfig } from "next";
import createNextIntlPlugin from "next-intl/plugin";
import { API_CSP, API_PATH_SEGMENTS, commonSecurityHeaders, DEV_PAGE_CSP } from "./lib/http/security-headers";
import { LOGO_CSP } from "./lib/management/logo-csp";

const issuer = process.env.IDP_ISSUER ?? `http://localhost:${process.env.PORT ?? 3000}`;
const common = Object.entries(commonSecurityHeaders(issuer)).map(([key, value]) => ({ key, value }));

const nextConfig: NextConfig = {
  // Native or WASM packages, and the ones that must be shared with server.ts, stay out of the bundle.
  serverExternalPackages: ["@torii/core", "@electric-sql/pglite", "@node-rs/argon2", "pg", "pino"],
  poweredByHeader: false,
  typedRoutes: false,
  // Separate build folders let several builds (CI, benchmarks, a developer) coexist.
  distDir: process.env.NEXT_DIST_DIR ?? ".next",
  headers() {
    return Promise.resolve([
      { source: "/:path*", headers: common },
      // Pages: in production the server entry sets a per-request nonce policy, which a static
      // rule here would overwrite, so this one serves `next dev` only. The authorization endpoint
      // sets its own CSP (lib/http/security-headers.ts, setsOwnCsp).
      ...(process.env.NODE_ENV === "production"
        ? []
        : [{ source: "/:path((?!oauth/v2/authorize).*)", headers: [{ key: "Content-Security-Policy", value: DEV_PAGE_CSP }] }]),
      {
        source: `/:prefix(${API_PATH_SEGMENTS.map((segment) => segment.replace(".", "\\.")).join("|")})/:path((?!v2/authorize).*)`,
        headers: [{ key: "Content-Security-Policy", value: API_CSP }],
      },
      // The logo may be an SVG: the same script-free policy its handler sets (the last match wins).
      { source: "/ui/branding/logo", headers: [{ key: "Content-Security-Policy", value: LOGO_CSP }] },
      { source: "/favicon.ico", headers: [{ key: "Content-Security-Policy", value: LOGO_CSP }] },
    ]);
  },
};

export default createNextIntlPlugin("./app/_server/i18n-request.ts")(nextConfig);
