import { backChannel, methodNotAllowed } from "@/lib/http/responses";
import type { Engine } from "@/lib/engine";
import { getSettings } from "@/lib/store/settings";
import { discoveryDocument } from "./discovery";

/**
 * GET /.well-known/openid-configuration. The document depends on the issuer and on the enabled
 * features only, so it is built once per set of features and served from the engine's cache.
 */
export const handleDiscovery = backChannel(async (inst: Engine, request: Request) => {
  if (request.method !== "GET" && request.method !== "HEAD") return methodNotAllowed(["GET"]);
  const { features } = await getSettings(inst);
  const body = await inst.caches.discovery.get(JSON.stringify(features), () => Promise.resolve(JSON.stringify(discoveryDocument(inst.issuer, features))));
  return new Response(request.method === "HEAD" ? null : body, {
    status: 200,
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      // Short, because enabling a feature changes the document.
      "Cache-Control": "public, max-age=60",
      "Access-Control-Allow-Origin": "*",
    },
  });
});
