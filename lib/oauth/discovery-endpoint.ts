import { config } from "@/lib/config";
import { backChannel, methodNotAllowed } from "@/lib/http/responses";
import { discoveryDocument } from "./discovery";

let cached: { issuer: string; body: string } | undefined;

/** GET /.well-known/openid-configuration. The document depends only on configuration, so it is built once. */
export const handleDiscovery = backChannel(async (request: Request) => {
  if (request.method !== "GET" && request.method !== "HEAD") return methodNotAllowed(["GET"]);
  const issuer = config().issuer;
  if (cached?.issuer !== issuer) cached = { issuer, body: JSON.stringify(discoveryDocument(issuer)) };
  return new Response(request.method === "HEAD" ? null : cached.body, {
    status: 200,
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "Cache-Control": "public, max-age=300",
      "Access-Control-Allow-Origin": "*",
    },
  });
});

