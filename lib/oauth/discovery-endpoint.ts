import { config } from "@/lib/config";
import { backChannel, methodNotAllowed } from "@/lib/http/responses";
import { instance } from "@/lib/instance";
import { getSettings } from "@/lib/store/settings";
import { discoveryDocument } from "./discovery";

let cached: { key: string; body: string } | undefined;

/**
 * GET /.well-known/openid-configuration. The document depends on the issuer and on the enabled
 * features only, so it is rebuilt when one of them changes and served from memory otherwise.
 */
export const handleDiscovery = backChannel(async (request: Request) => {
  if (request.method !== "GET" && request.method !== "HEAD") return methodNotAllowed(["GET"]);
  const issuer = config().issuer;
  const { features } = await getSettings((await instance()).db);
  const key = issuer + JSON.stringify(features);
  if (cached?.key !== key) cached = { key, body: JSON.stringify(discoveryDocument(issuer, features)) };
  return new Response(request.method === "HEAD" ? null : cached.body, {
    status: 200,
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      // Short, because enabling a feature changes the document.
      "Cache-Control": "public, max-age=60",
      "Access-Control-Allow-Origin": "*",
    },
  });
});
