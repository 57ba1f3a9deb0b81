import { dateOf } from "@/lib/clock";
import type { StoredToken } from "@/lib/store/tokens";
import type { User } from "@/lib/store/users";
import { GRANT_CLAIM, looksLikeJwt, verifyOwnJwt, type TokenEnv } from "./tokens";

export type { TokenEnv };

/**
 * An access token this instance issued and that is still good: signature/issuer/expiry (JWT) or
 * the stored row (opaque), not revoked by the client, a grant revocation or a logout, and its
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

/** A stored token (opaque access or refresh) that is neither revoked nor expired. */
export function isStoredTokenActive(t: StoredToken, now: Date): boolean {
  return !t.revokedAt && t.expiresAt > now;
}

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);
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

async function resolveUncached(env: TokenEnv, token: string): Promise<ActiveAccessToken | undefined> {
  const resolved = looksLikeJwt(token) ? await fromJwt(env, token) : await fromStored(env, token);
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

type Unchecked = Omit<ActiveAccessToken, "user"> & { userId: string | null };

async function fromJwt(env: TokenEnv, token: string): Promise<Unchecked | undefined> {
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

async function fromStored(env: TokenEnv, token: string): Promise<Unchecked | undefined> {
  const t = await env.store.tokens.findByValue(token);
  // Refresh tokens are credentials of their client, never access tokens (see introspect.ts).
  if (!t || t.kind !== "access" || !isStoredTokenActive(t, dateOf(env.store.clock))) return undefined;
  return {
    format: "opaque",
    jti: t.id,
    clientId: t.clientId,
    userId: t.userId,
    sub: t.userId ?? t.clientId,
    scopes: t.scopes,
    audience: t.audience,
    iat: seconds(t.createdAt),
    nbf: seconds(t.createdAt),
    exp: seconds(t.expiresAt),
    sessionId: t.sessionId,
    grantId: t.grantId,
    actor: t.actor ?? null,
  };
}
