import { dateOf, secondsOf } from "@/lib/clock";
import type { Target } from "./resources";
import { errors, jwtVerify, SignJWT, type JWTPayload } from "jose";
import { NODE_SIGNED_ALGS, signCompactRs256 } from "@/lib/keys/jws";
import { randomToken, sha256Digest } from "@/lib/crypto";
import { acrOf } from "@/lib/protocol/vocabulary";
import { SIGNING_ALG, type ActiveKey } from "@/lib/keys/signing-keys";
import type { Client } from "@/lib/store/clients";
import type { Repositories, Store, TokenSealer } from "@/lib/store/repositories";
import type { RefreshToken, RefreshTokenFamily } from "@/lib/store/tokens";
import type { User } from "@/lib/store/users";
import { claimsForScopes } from "./claims";
import { scopeString, USER_CLAIM_SCOPES } from "./scopes";

/** Private JWT claim carrying the grant id, so that revoking a grant reaches its stateless tokens. */
export const GRANT_CLAIM = "gid";

/** What verifying our own tokens needs: the store (keys, revocations) and the issuer. */
export type TokenEnv = { store: Store; issuer: string };

/**
 * What issuing tokens needs: the repositories to write with (a grant's transaction, or the
 * store), and the signing key and primary domain, read from the engine's caches before any
 * transaction opens (grants/transaction.ts): a cache must not be filled from a transaction.
 */
export type IssueEnv = { repos: Repositories; issuer: string; signingKey: ActiveKey; sealer: TokenSealer; primaryDomain: string };

/** What `env` is for the store itself, outside any transaction, with the settings the request read. */
export async function issueEnvOf(store: Store, issuer: string, settings: { primaryDomain: string }): Promise<IssueEnv> {
  return { repos: store, issuer, signingKey: await store.keys.signing(), sealer: store.keys.sealer, primaryDomain: settings.primaryDomain };
}

/**
 * Everything a token is issued from. The authorization endpoint (implicit flow) and every grant
 * of the token endpoint build one of these; nothing here knows which grant it came from.
 */
export type TokenContext = IssueEnv & {
  client: Client;
  /** The user the tokens are about; absent when the client itself is the subject (client credentials). */
  user?: User | null;
  scopes: string[];
  /** Access token audience; the client itself when absent. */
  audience?: string[];
  sessionId?: string | null;
  /** The grant the tokens belong to; stateless JWTs carry it so that revoking the grant reaches them. */
  grantId?: string | null;
  familyId?: string | null;
  nonce?: string | null;
  authTime?: Date | null;
  amr?: string[] | null;
  /** RFC 8693 `act` claim of delegated/impersonated tokens. */
  actor?: Record<string, unknown> | null;
  /** Overrides the client's registered access token format (token exchange asks for one; an API has its own). */
  format?: "jwt" | "opaque";
  /** Overrides the client's access token lifetime, in seconds (an API has its own). */
  lifetime?: number;
  /** The subject's roles at the token's API: the `roles` claim of a JWT access token. */
  roles?: readonly string[] | null;
  /** For `at_hash` in the ID token. */
  accessToken?: string | null;
  /** For `c_hash` in an ID token returned from the authorization endpoint together with a code. */
  code?: string | null;
  /**
   * Whether an access token goes out in the same response: then the ID token leaves out the
   * profile/email/phone/address claims (spec 2.1) unless the client asked for them there.
   */
  withAccessToken?: boolean;
  /** User claims the `claims` parameter asked for in the ID token (OIDC Core 5.5), released whatever the scope. */
  idTokenClaims?: readonly string[] | null;
  /**
   * Seconds since the epoch after which nothing issued here may be valid: the expiry of a token
   * exchange's subject and actor tokens, which a refresh token family from that exchange keeps
   * (`notAfter`), so that no access, ID or refresh token of it, nor of its refreshes, outlives
   * them. Null or absent for everything else.
   */
  notAfter?: number | null;
  /** Seconds since the epoch; tests pin it. */
  now?: number;
};

export type IssuedAccessToken = { token: string; expiresIn: number; jti: string; format: "jwt" | "opaque"; expiresAt: Date };

function nowSeconds(ctx: TokenContext): number {
  return ctx.now ?? secondsOf(ctx.repos.clock);
}

/** A lifetime from now, shortened to end at `ctx.notAfter` when that comes first. */
export function lifetimeWithin(ctx: TokenContext, lifetime: number): number {
  return ctx.notAfter == null ? lifetime : Math.min(lifetime, ctx.notAfter - nowSeconds(ctx));
}

function subjectOf(ctx: TokenContext): string {
  return ctx.user?.id ?? ctx.client.id;
}

function sign(ctx: TokenContext, payload: Record<string, unknown>, typ: string): Promise<string> {
  const key = ctx.signingKey;
  // RS256 (every key Torii generates) through node:crypto, the rest through jose (lib/keys/jws.ts).
  if (key.signer && NODE_SIGNED_ALGS.has(key.alg)) return signCompactRs256({ alg: key.alg, kid: key.kid, typ }, payload, key.signer);
  return new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: key.kid, typ }).sign(key.privateKey);
}

/** Left half of the SHA-256 of an ASCII value, base64url: `at_hash` / `c_hash` (OIDC Core 3.1.3.6, RS256). */
export function halfHash(value: string): string {
  const d = sha256Digest(Buffer.from(value, "ascii"));
  return d.subarray(0, d.length / 2).toString("base64url");
}

/**
 * An access token in the client's format. Neither is stored: a JWT is signed, an opaque token is
 * the same claims sealed (encrypted and authenticated, lib/keys/token-sealer.ts), so only this
 * provider can read it and the client learns nothing from it. Either is revoked by recording its
 * `jti`, grant, session or audience (lib/store/grants.ts), and introspection checks those records.
 */
export async function issueAccessToken(ctx: TokenContext): Promise<IssuedAccessToken> {
  const format = ctx.format ?? (ctx.client.accessTokenType === "opaque" ? "opaque" : "jwt");
  const lifetime = lifetimeWithin(ctx, ctx.lifetime ?? ctx.client.accessTokenLifetime);
  const iat = nowSeconds(ctx);
  const expiresAt = new Date((iat + lifetime) * 1000);
  const audience = ctx.audience?.length ? ctx.audience : [ctx.client.id];
  const jti = randomToken(16);
  if (format === "opaque") {
    const sealed: SealedAccessToken = { j: jti, c: ctx.client.id, s: scopeString(ctx.scopes), a: audience, i: iat, e: iat + lifetime };
    if (ctx.user) sealed.u = ctx.user.id;
    if (ctx.sessionId) sealed.sid = ctx.sessionId;
    if (ctx.grantId) sealed.g = ctx.grantId;
    if (ctx.actor) sealed.act = ctx.actor;
    return { token: ctx.sealer.seal(sealed), expiresIn: lifetime, jti, format, expiresAt };
  }
  const payload: Record<string, unknown> = {
    iss: ctx.issuer,
    sub: subjectOf(ctx),
    aud: audience.length === 1 ? audience[0] : audience,
    exp: iat + lifetime,
    iat,
    nbf: iat,
    jti,
    client_id: ctx.client.id,
  };
  // RFC 6749 §3.3: a scope is one or more scope tokens; no scope granted, no claim (RFC 9068 §2.2.3).
  if (ctx.scopes.length) payload.scope = scopeString(ctx.scopes);
  if (ctx.sessionId) payload.sid = ctx.sessionId;
  if (ctx.grantId) payload[GRANT_CLAIM] = ctx.grantId;
  if (ctx.actor) payload.act = ctx.actor;
  if (ctx.roles) payload.roles = [...ctx.roles];
  return { token: await sign(ctx, payload, "at+jwt"), expiresIn: lifetime, jti, format, expiresAt };
}

/**
 * Every claim issueIdToken can put in an ID token besides the user claims (claims.ts USER_CLAIMS),
 * for discovery's `claims_supported`. No `c_hash`: no response type returns a code together with
 * an ID token. `act` comes from token exchange.
 */
export const ID_TOKEN_CLAIMS = ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "azp", "at_hash", "sid", "acr", "amr", "act", "roles"] as const;

/** An ID token for `ctx.user` (OIDC Core 2), audience the client. */
export async function issueIdToken(ctx: TokenContext): Promise<string> {
  if (!ctx.user) throw new Error("an ID token needs a user");
  const iat = nowSeconds(ctx);
  const payload: Record<string, unknown> = {
    iss: ctx.issuer,
    sub: ctx.user.id,
    aud: ctx.client.id,
    exp: iat + lifetimeWithin(ctx, ctx.client.idTokenLifetime),
    iat,
    azp: ctx.client.id,
  };
  if (ctx.authTime) payload.auth_time = Math.floor(ctx.authTime.getTime() / 1000);
  if (ctx.nonce) payload.nonce = ctx.nonce;
  if (ctx.accessToken) payload.at_hash = halfHash(ctx.accessToken);
  if (ctx.code) payload.c_hash = halfHash(ctx.code);
  if (ctx.sessionId) payload.sid = ctx.sessionId;
  if (ctx.amr?.length) payload.amr = ctx.amr;
  // The class the sign-in achieved, whatever the client asked for (Core 3.1.2.1: acr_values is
  // a request, the acr claim says what happened).
  const acr = acrOf(ctx.amr);
  if (acr) payload.acr = acr;
  if (ctx.actor) payload.act = ctx.actor;
  if (ctx.scopes.includes("roles")) payload.roles = await ctx.repos.roles.byApi(ctx.user.id);
  const releaseUserClaims = !ctx.withAccessToken || ctx.client.idTokenUserinfoAssertion;
  const scopes = releaseUserClaims ? ctx.scopes : ctx.scopes.filter((s) => !(USER_CLAIM_SCOPES as readonly string[]).includes(s));
  // Registered claims above win over user claims of the same name.
  return sign(ctx, { ...claimsForScopes(ctx.user, scopes, ctx.primaryDomain, ctx.idTokenClaims ?? []), ...payload }, "JWT");
}

/** A refresh token just issued: its value, its row as the refresh grant reads it, and its family when new. */
export type IssuedRefreshToken = { token: string; stored: RefreshToken; newFamily: RefreshTokenFamily | null };

/**
 * A refresh token in `ctx.familyId` (a new family when absent), stored by hash. `value` is the
 * token itself when the caller derived it (a rotation's successor, grants/refresh-successor.ts);
 * otherwise 256 random bits.
 */
export async function issueRefreshToken(ctx: TokenContext, value?: string): Promise<IssuedRefreshToken> {
  if (!ctx.grantId) throw new Error("a refresh token needs a grant");
  const expiresAt = new Date((nowSeconds(ctx) + lifetimeWithin(ctx, ctx.client.refreshTokenLifetime)) * 1000);
  const family = {
    sessionId: ctx.sessionId ?? null,
    scopes: ctx.scopes,
    authTime: ctx.authTime ?? null,
    amr: ctx.amr ?? [],
    actor: ctx.actor ?? null,
    notAfter: ctx.notAfter == null ? null : new Date(ctx.notAfter * 1000),
  };
  const newFamily = ctx.familyId
    ? null
    : { id: (await ctx.repos.tokens.createFamily({ grantId: ctx.grantId, clientId: ctx.client.id, userId: ctx.user?.id ?? null, ...family, expiresAt })).id, ...family, revokedAt: null, lastRefreshIp: null };
  const familyId = ctx.familyId ?? newFamily!.id;
  const row = {
    kind: "refresh" as const,
    clientId: ctx.client.id,
    userId: ctx.user?.id ?? null,
    grantId: ctx.grantId,
    familyId,
    audience: ctx.audience?.length ? ctx.audience : [ctx.client.id],
    expiresAt,
  };
  const inserted = await ctx.repos.tokens.insertOpaque({ value, ...row, sessionId: family.sessionId, scopes: ctx.scopes, actor: family.actor });
  return { token: inserted.value, stored: { id: inserted.id, ...row, revokedAt: null, rotatedAt: null }, newFamily };
}

/** Whether a refresh token goes out: only for `offline_access`, and only to a client registered for the refresh grant. */
export function wantsRefreshToken(client: Client, scopes: string[]): boolean {
  return scopes.includes("offline_access") && client.grantTypes.includes("refresh_token");
}

// ---- verifying tokens we issued (token exchange subject/actor tokens; introspection may reuse) ----

export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

/**
 * Verifies a JWT this instance issued (signature by a published key, issuer, expiry, `typ`) and
 * that it has not been revoked by jti, grant or session. Undefined when any of that fails.
 */
export async function verifyOwnJwt(
  env: TokenEnv,
  token: string,
  typ: "at+jwt" | "JWT",
): Promise<JWTPayload | undefined> {
  if (!looksLikeJwt(token)) return undefined;
  // The keys and the revocation records are read outside the `try`: when they cannot be read
  // (the database out of reach), the token is not known to be invalid, and saying so would have
  // a resource server refuse it, or a revocation answer 200 having revoked nothing.
  const keys = await env.store.keys.verification();
  let verified;
  try {
    verified = await jwtVerify(token, keys, {
      algorithms: [SIGNING_ALG],
      issuer: env.issuer,
      requiredClaims: ["exp", "iat", "sub"],
      currentDate: dateOf(env.store.clock),
    });
  } catch (err) {
    if (isTokenFault(err)) return undefined;
    throw err;
  }
  const { payload, protectedHeader } = verified;
  if ((protectedHeader.typ ?? "JWT") !== typ) return undefined;
  const revoked = await env.store.tokens.isAccessTokenRevoked({
    jti: payload.jti,
    grantId: typeof payload[GRANT_CLAIM] === "string" ? payload[GRANT_CLAIM] : null,
    sessionId: typeof payload.sid === "string" ? payload.sid : null,
    iat: payload.iat,
    // A deleted API's tokens (lib/store/apis.ts) are revoked by their audience.
    audience: Array.isArray(payload.aud) ? payload.aud : typeof payload.aud === "string" ? [payload.aud] : [],
  });
  return revoked ? undefined : payload;
}

/**
 * Whether a failure to verify a JWT is the token's own (malformed, not signed by a key of ours,
 * expired, wrong issuer...): jose reports every such case as a JOSEError. Anything else is the
 * server's and must not be answered as an invalid token.
 */
export function isTokenFault(err: unknown): boolean {
  return err instanceof errors.JOSEError;
}

/**
 * What an opaque access token seals: the claims a JWT access token carries, under short names
 * (the token travels in every request to a resource server). `u` is the user; a client-only token
 * (client credentials) has none and its client is its subject.
 */
export type SealedAccessToken = {
  j: string;
  c: string;
  u?: string;
  s: string;
  a: string[];
  i: number;
  e: number;
  sid?: string;
  g?: string;
  act?: Record<string, unknown>;
};

const optionalString = (v: unknown) => v === undefined || (typeof v === "string" && v !== "");

function isSealedAccessToken(p: Record<string, unknown>): p is SealedAccessToken {
  return (
    typeof p.j === "string" &&
    typeof p.c === "string" &&
    typeof p.s === "string" &&
    Array.isArray(p.a) &&
    p.a.every((a) => typeof a === "string") &&
    Number.isInteger(p.i) &&
    Number.isInteger(p.e) &&
    optionalString(p.u) &&
    optionalString(p.sid) &&
    optionalString(p.g) &&
    (p.act === undefined || (typeof p.act === "object" && p.act !== null))
  );
}

/**
 * Opens an opaque access token this provider sealed and checks what verifyOwnJwt checks of a JWT:
 * not expired, and not revoked by jti, grant, session or audience. Undefined when any of that
 * fails, and for anything that is not a sealed access token (a JWT or a refresh token, say)
 * without touching the database.
 */
export async function openOwnSealed(env: TokenEnv, token: string): Promise<SealedAccessToken | undefined> {
  const p = env.store.keys.sealer.open(token);
  if (!p || !isSealedAccessToken(p) || p.e <= secondsOf(env.store.clock)) return undefined;
  const revoked = await env.store.tokens.isAccessTokenRevoked({ jti: p.j, grantId: p.g ?? null, sessionId: p.sid ?? null, iat: p.i, audience: p.a });
  return revoked ? undefined : p;
}

/** What an access token for an API differs in: audience, format, lifetime and the subject's roles there. */
export function apiTokenContext(target: Target, roles: readonly string[]): Pick<TokenContext, "audience" | "format" | "lifetime" | "roles"> {
  return {
    audience: [target.api.identifier],
    format: target.api.accessTokenType === "opaque" ? "opaque" : "jwt",
    lifetime: target.api.accessTokenLifetime,
    roles,
  };
}
