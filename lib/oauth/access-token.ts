import type { User } from "@/lib/store/users";
import { GRANT_CLAIM, looksLikeJwt, openOwnSealed, verifyOwnJwt, type TokenEnv } from "./tokens";

export type { TokenEnv };

/**
 * An access token this instance issued and that is still good: signature/issuer/expiry (JWT) or
 * seal/expiry (opaque), not revoked by the client, a grant revocation or a logout, and its
 * client and user still exist (a locked user's tokens stop working at once).
 */
export type ActiveAccessToken = {
  format: "jwt" | "opaque";
  jti: string;
  clientId: string;
  /** The user the token is about; null for client-only tokens (client credentials). */
  user: User | null;
  sub: string;
  scopes: string[];
  audience: string[];
  iat: number;
  nbf: number;
  exp: number;
  sessionId: string | null;
  grantId: string | null;
  actor: Record<string, unknown> | null;
};

const str = (v: unknown): string | null => (typeof v === "string" && v ? v : null);

/**
 * Resolves a presented access token, JWT or opaque, to what it grants. Undefined for anything
 * that is not an active access token: unknown, malformed, expired, revoked, a refresh token,
 * an ID token, or a token whose client or user is gone. Introspection and userinfo share this
 * so that both answer the same question the same way.
 */
export async function resolveAccessToken(env: TokenEnv, token: string, now = env.store.clock.now()): Promise<ActiveAccessToken | undefined> {
  if (!token || token.length > 8192) return undefined;
  // An active token is answered from memory for a few seconds (a resource server introspects the
  // same token on every request); every revocation drops that memory when it commits.
  const t = await env.store.activeTokens.through(token, () => resolveUncached(env, token));
  // It may have expired since it was found active.
  return t && t.exp * 1000 > now ? t : undefined;
}

/**
 * What an access token of ours says, JWT or opaque, once its signature or seal, expiry and
 * revocation records are checked; whether its client and user still exist is not (revocation
 * needs only whose token it is).
 */
export async function readOwnAccessToken(env: TokenEnv, token: string): Promise<UncheckedAccessToken | undefined> {
  return looksLikeJwt(token) ? fromJwt(env, token) : fromSealed(env, token);
}

async function resolveUncached(env: TokenEnv, token: string): Promise<ActiveAccessToken | undefined> {
  const resolved = await readOwnAccessToken(env, token);
  if (!resolved) return undefined;
  const client = await env.store.clients.get(resolved.clientId);
  // A machine user that presented its jwt-bearer assertion without a client is its own client:
  // its tokens name it as both client_id and sub, and no registered client has that id.
  const ownClient = !client && resolved.sub === resolved.clientId;
  if (!client && !ownClient) return undefined;
  const userId = resolved.userId ?? (ownClient ? resolved.sub : null);
  let user: User | null = null;
  if (userId) {
    user = (await env.store.users.get(userId)) ?? null;
    // A JWT does not say whether its subject is a user or a client (token exchange can make a
    // client the subject of a token issued to another client): only a known client may stand in.
    if (!user && !(resolved.format === "jwt" && !ownClient && (await env.store.clients.get(userId)))) return undefined;
    if (user?.locked) return undefined;
  }
  if (ownClient && user?.type !== "machine") return undefined;
  const { userId: _, ...rest } = resolved;
  return { ...rest, user };
}

export type UncheckedAccessToken = Omit<ActiveAccessToken, "user"> & { userId: string | null };

async function fromJwt(env: TokenEnv, token: string): Promise<UncheckedAccessToken | undefined> {
  // Signature by a published key, issuer, exp/nbf, typ at+jwt (an ID token is refused), and the
  // revocation records by jti, grant and session: a JWT is only as good as its last revocation.
  const p = await verifyOwnJwt(env, token, "at+jwt");
  if (!p) return undefined;
  const clientId = str(p.client_id);
  const jti = str(p.jti);
  if (!clientId || !jti || typeof p.exp !== "number" || typeof p.iat !== "number" || !p.sub) return undefined;
  const audience = Array.isArray(p.aud) ? p.aud.filter((a): a is string => typeof a === "string") : p.aud ? [p.aud] : [];
  return {
    format: "jwt",
    jti,
    clientId,
    // A client-credentials token names the client itself as its subject.
    userId: p.sub === clientId ? null : p.sub,
    sub: p.sub,
    scopes: str(p.scope)?.split(" ").filter(Boolean) ?? [],
    audience,
    iat: p.iat,
    nbf: typeof p.nbf === "number" ? p.nbf : p.iat,
    exp: p.exp,
    sessionId: str(p.sid),
    grantId: str(p[GRANT_CLAIM]),
    actor: p.act && typeof p.act === "object" ? (p.act as Record<string, unknown>) : null,
  };
}

async function fromSealed(env: TokenEnv, token: string): Promise<UncheckedAccessToken | undefined> {
  const t = await openOwnSealed(env, token);
  if (!t) return undefined;
  return {
    format: "opaque",
    jti: t.j,
    clientId: t.c,
    userId: t.u ?? null,
    sub: t.u ?? t.c,
    scopes: t.s.split(" ").filter(Boolean),
    audience: t.a,
    iat: t.i,
    nbf: t.i,
    exp: t.e,
    sessionId: t.sid ?? null,
    grantId: t.g ?? null,
    actor: t.act ?? null,
  };
}
