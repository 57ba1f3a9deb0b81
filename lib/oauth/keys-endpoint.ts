import { addressForLimits, clientAddress } from "@/lib/http/client-address";
import { backChannel, json, methodNotAllowed, textResponse } from "@/lib/http/responses";
import type { Engine } from "@/lib/engine";
import type { HttpRequest } from "@/lib/http/request";
import { answerPreflight } from "./cors";

/**
 * GET /oauth/v2/keys: the public signing keys. Cacheable with an ETag; rate limited per client
 * address, counted in process and shared with the other instances through the database in
 * batches (lib/http/token-throttle.ts), so that answering from memory needs no write per request.
 */
export const handleKeys = backChannel(async (inst: Engine, request: HttpRequest) => {
  if (request.method === "OPTIONS") return answerPreflight(request, ["GET", "HEAD"]);
  if (request.method !== "GET" && request.method !== "HEAD") return methodNotAllowed(["GET", "HEAD", "OPTIONS"]);
  const settings = await inst.store.settings.get();
  const limit = inst.jwksThrottle.hit(inst.store.rateLimits, addressForLimits(clientAddress(request)), settings.rateLimits.jwksPerMinute);
  if (!limit.allowed) {
    return json(
      { error: "rate_limited", error_description: "Too many key set requests; cache the key set and retry later." },
      429,
      { "Retry-After": String(limit.retryAfterSeconds), "Cache-Control": "no-store" },
    );
  }
  const { body, etag } = await inst.store.keys.published();
  const headers = {
    "Cache-Control": `public, max-age=${inst.config.jwksMaxAgeSeconds}`,
    ETag: etag,
    "Access-Control-Allow-Origin": "*",
  };
  const inm = request.headers.get("if-none-match");
  if (inm && inm.split(",").some((t) => t.trim() === etag || t.trim() === "*")) {
    return new Response(null, { status: 304, headers });
  }
  return textResponse(request.method === "HEAD" ? null : body, {
    status: 200,
    headers: { "Content-Type": "application/jwk-set+json; charset=utf-8", ...headers },
  });
});
