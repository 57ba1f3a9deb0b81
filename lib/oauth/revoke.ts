import { clientAddress } from "@/lib/http/client-address";
import { json, NO_STORE } from "@/lib/http/responses";
import type { Engine } from "@/lib/engine";
import type { Client } from "@/lib/store/clients";
import type { Actor } from "@/lib/store/audit";
import { readOwnAccessToken, type TokenEnv } from "./access-token";
import { ALL_METHODS, authenticateClient } from "./client-auth";
import { InvalidRequest } from "@/lib/protocol/errors";
import { corsEndpoint, type CorsScope } from "./cors";
import { readForm } from "./form";
import { looksLikeJwt } from "./tokens";
import type { HttpRequest } from "@/lib/http/request";

export type RevocationOutcome =
  | { revoked: false }
  | { revoked: true; kind: "access_token"; format: "jwt" | "opaque"; id: string }
  | { revoked: true; kind: "refresh_token"; familyId: string; grantId: string };

/**
 * RFC 7009 2.1: revokes `token` if it is one of `client`'s own, live tokens. Anything else
 * (unknown, expired, already revoked, another client's) changes nothing, and the endpoint
 * answers 200 either way, so a client learns nothing about tokens that are not its own.
 *
 * `token_type_hint` is only a hint (RFC 7009 2.1): a JWT, a sealed opaque access token and a
 * stored refresh token cannot be confused, so the hint only orders the attempts and a wrong hint
 * never stops a revocation. Only the refresh token is looked up in the database.
 */
export async function revokeToken(env: TokenEnv, client: Client, token: string, hint?: string): Promise<RevocationOutcome> {
  const tryAccess = () => revokeAccessToken(env, client, token);
  const tryRefresh = () => revokeRefreshToken(env, client, token);
  const order = hint === "refresh_token" ? [tryRefresh, tryAccess] : [tryAccess, tryRefresh];
  for (const attempt of order) {
    const outcome = await attempt();
    if (outcome) return outcome;
  }
  return { revoked: false };
}

/**
 * An access token, JWT or opaque, is not stored: its `jti` is recorded as revoked until it would
 * expire anyway (spec 4.6: revoking an access token revokes only that token).
 */
async function revokeAccessToken(env: TokenEnv, client: Client, token: string): Promise<RevocationOutcome | undefined> {
  const t = await readOwnAccessToken(env, token);
  if (!t || t.clientId !== client.id) return undefined;
  await env.store.grants.revokeJti(t.jti, "client_revocation", new Date(t.exp * 1000));
  return { revoked: true, kind: "access_token", format: t.format, id: t.jti };
}

async function revokeRefreshToken(env: TokenEnv, client: Client, token: string): Promise<RevocationOutcome | undefined> {
  if (looksLikeJwt(token) || token.length > 512) return undefined;
  const t = await env.store.tokens.findByValue(token);
  // A refresh token takes its rotation family and the access tokens issued from it along
  // (RFC 7009 2.1, spec 4.6): revokeFamily revokes the grant, which reaches the access tokens
  // too. An already rotated token still names a live family the client asked to end.
  if (!t || t.clientId !== client.id || t.kind !== "refresh" || !t.familyId) return undefined;
  const family = await env.store.tokens.getFamily(t.familyId);
  if (!family || family.revokedAt) return undefined;
  await env.store.tokens.revokeFamily(t.familyId, "client_revocation");
  return { revoked: true, kind: "refresh_token", familyId: t.familyId, grantId: t.grantId };
}

/** POST /oauth/v2/revoke (RFC 7009): all four client authentication methods (spec 5). */
export const handleRevoke = corsEndpoint(["POST"], async (inst: Engine, request: HttpRequest, cors: CorsScope) => {
  if (request.method !== "POST") {
    return json({ error: "invalid_request", error_description: "The revocation endpoint accepts POST only." }, 405, {
      ...NO_STORE,
      Allow: "POST",
    });
  }
  const form = await readForm(request);
  const env = inst;
  const { client } = await authenticateClient(request, form, env, ALL_METHODS);
  cors.client = client;
  const token = form.get("token");
  if (!token) throw new InvalidRequest("The token parameter is missing.");
  const outcome = await revokeToken(env, client, token, form.get("token_type_hint"));
  if (outcome.revoked) {
    const actor: Actor = { type: "client", id: client.id, ip: clientAddress(request), userAgent: request.headers.get("user-agent") };
    await inst.store.audit.record(
      actor,
      outcome.kind === "access_token"
        ? { action: "token.revoked", targetType: "access_token", targetId: outcome.id, clientId: client.id, details: { format: outcome.format } }
        : {
            action: "refresh_family.revoked",
            targetType: "refresh_family",
            targetId: outcome.familyId,
            clientId: client.id,
            details: { reason: "client_revocation", grantId: outcome.grantId },
          },
    );
  }
  // RFC 7009 2.2: 200 whether or not anything was revoked; the body is empty.
  return new Response(null, { status: 200, headers: { ...NO_STORE } });
});
