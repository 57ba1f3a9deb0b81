import { NO_STORE } from "@/lib/http/responses";
import type { Engine } from "@/lib/engine";
import { getSettings } from "@/lib/store/settings";
import { logoTag } from "@/lib/logo";
import { defaultIconSvg } from "./favicon";
import { LOGO_CSP } from "./logo-csp";
import type { HttpRequest } from "@/lib/http/request";

/** GET /ui/branding/logo: the instance logo, cacheable, revalidated by ETag. */
export async function handleBrandingLogo(inst: Engine, request: HttpRequest): Promise<Response> {
  if (request.method !== "GET" && request.method !== "HEAD") return notAllowed();
  const settings = await getSettings(inst);
  if (!settings.logo || !settings.logoContentType) {
    return new Response("No logo.", { status: 404, headers: { "Content-Type": "text/plain; charset=utf-8", ...NO_STORE } });
  }
  return imageResponse(request, settings.logo, settings.logoContentType);
}

/**
 * GET /favicon.ico: the instance logo when there is one, else a default icon in the brand's
 * colour, so that no page load ends in a 404 for the icon browsers ask for.
 */
export async function handleFavicon(inst: Engine, request: HttpRequest): Promise<Response> {
  if (request.method !== "GET" && request.method !== "HEAD") return notAllowed();
  const settings = await getSettings(inst);
  if (settings.logo && settings.logoContentType) return imageResponse(request, settings.logo, settings.logoContentType);
  return imageResponse(request, Buffer.from(defaultIconSvg(settings.branding)), "image/svg+xml");
}

function notAllowed(): Response {
  return new Response(null, { status: 405, headers: { Allow: "GET, HEAD" } });
}

function imageResponse(request: HttpRequest, image: Buffer, contentType: string): Response {
  const etag = `"${logoTag(image)}"`;
  const headers = {
    // Short: the branding API links it with a version parameter, so a changed logo is a new URL anyway.
    "Cache-Control": "public, max-age=300",
    ETag: etag,
    "Content-Security-Policy": LOGO_CSP,
  };
  const inm = request.headers.get("if-none-match");
  if (inm && inm.split(",").some((t) => t.trim() === etag || t.trim() === "*")) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(request.method === "HEAD" ? null : new Uint8Array(image), {
    status: 200,
    headers: { ...headers, "Content-Type": contentType },
  });
}
