import { backChannel, methodNotAllowed, textResponse } from "@/lib/http/responses";
import type { Engine } from "@/lib/engine";
import { discoveryDocument } from "./discovery";
import type { HttpRequest } from "@/lib/http/request";
import { answerPreflight } from "./cors";

/**
 * GET /.well-known/openid-configuration (OpenID Connect Discovery 1.0) and
 * /.well-known/oauth-authorization-server (RFC 8414): one document for both, as RFC 8414 3
 * allows. Every field of it is one of the two registries', and an OAuth 2.0 client ignores the
 * OpenID ones it does not know. The document depends on the issuer, the enabled features and the
 * APIs' scopes, so it is built once per set of features and served from the engine's cache until
 * an API changes.
 */
export const handleDiscovery = backChannel(async (inst: Engine, request: HttpRequest) => {
  if (request.method === "OPTIONS") return answerPreflight(request, ["GET", "HEAD"]);
  if (request.method !== "GET" && request.method !== "HEAD") return methodNotAllowed(["GET", "HEAD", "OPTIONS"]);
  const { features } = await inst.store.settings.get();
  // Dropped whenever an API changes (lib/store/caches.ts), since it lists the APIs' scopes.
  const body = await inst.caches.discovery.get(JSON.stringify(features), async () => {
    const apiScopes = [...new Set((await inst.store.apis.list()).flatMap((a) => a.scopes.map((s) => s.name)))];
    return JSON.stringify(discoveryDocument(inst.issuer, features, apiScopes));
  });
  return textResponse(request.method === "HEAD" ? null : body, {
    status: 200,
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      // Short, because enabling a feature changes the document.
      "Cache-Control": "public, max-age=60",
      "Access-Control-Allow-Origin": "*",
    },
  });
});
