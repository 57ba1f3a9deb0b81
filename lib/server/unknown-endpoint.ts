import type { HttpRequest } from "@/lib/http/request";
import { json, NO_STORE } from "@/lib/http/responses";
import { API_PATH_SEGMENTS } from "@/lib/http/security-headers";

// The management API's prefix is among them, but its router answers its own unknown paths first.
const API_PREFIXES = API_PATH_SEGMENTS.map((segment) => `/${segment}/`);

export function isUnderApiPrefix(pathname: string): boolean {
  return API_PREFIXES.some((p) => pathname.startsWith(p));
}

/**
 * An address under an API prefix that names no endpoint: a JSON 404 that a client can read,
 * instead of the hosted pages' "not found" page, which the API's CSP would show unstyled. It
 * answers every method alike: there is nothing there to allow. It is not a 200 either, which is
 * what a password manager checks before trusting `/.well-known/change-password`.
 */
export function handleUnknownEndpoint(_engine: unknown, request: HttpRequest): Promise<Response> {
  const pathname = new URL(request.url).pathname;
  return Promise.resolve(json({ error: "not_found", error_description: `No such endpoint: ${pathname}.` }, 404, { ...NO_STORE }));
}
