import type { Clock } from "@/lib/clock";
import type { JWTVerifyGetKey } from "jose";
import type { recordAudit } from "./audit";
import type { completeAuthRequest, createAuthRequest, findPendingAuthRequest, updateAuthRequest } from "./auth-requests";
import type { Client, ClientOrigins } from "./clients";
import type { Api, rolesByApi, rolesFor } from "./apis";
import type { consentsOf, grantConsent } from "./consents";
import type { createAuthorizationCode, findAuthorizationCode, findCodeForRedemption, markCodeUsed, Redemption } from "./codes";
import type { createGrant, getGrant, revokeGrant, revokeSessionTokens, sessionEnded } from "./grants";
import type { RateLimitResult } from "./rate-limit";
import type { browserWithSessions, createUserAgent, endSessions, findUserAgent, liveSessions, openSessionIdsOfUser, touchSession } from "./sessions";
import type { Settings } from "./settings";
import type { ActiveKey } from "./signing-keys";
import type {
  createRefreshFamily,
  noteFamilyRefreshIp,
  findTokenByValue,
  findTokenWithGrant,
  getRefreshFamily,
  insertOpaqueToken,
  isAccessTokenRevoked,
  markRotated,
  revokeFamily,
  TokenWithGrant,
} from "./tokens";
import type { findUserByLoginName, getMachineKey, getUser } from "./users";

/**
 * The storage the protocol core (lib/oauth, the sign-in policy's inputs) works with: one
 * repository per aggregate, reached through `engine.store`. Only lib/store knows how they are
 * stored (Drizzle on PGlite or PostgreSQL, lib/store/drizzle-store.ts); the core's unit tests
 * hand it fakes (test/grants-unit.test.ts).
 *
 * A method has the signature of the store function it stands for, without the database argument
 * (`On<typeof fn>`), so that the two cannot drift apart.
 */
type On<F> = F extends (db: never, ...args: infer A) => infer R ? (...args: NowOptional<A>) => R : never;

/** A trailing `now` is optional on a repository: left out, it is the engine clock's time (Repositories.clock). */
type NowOptional<A extends unknown[]> = A extends [...infer H, Date] ? [...H, Date?] : A;

/**
 * A read remembered, by the secret value it was for (a code, a refresh token), until that value
 * comes back to this instance: `take` answers it once, or undefined when forgotten or expired.
 */
export type Remembered<T> = { remember(value: string, read: T): void; take(value: string): Promise<T> | undefined };

export interface CodeRepository {
  create: On<typeof createAuthorizationCode>;
  find: On<typeof findAuthorizationCode>;
  /** The code with its grant, user and session state, in one read (the code grant's). */
  findForRedemption: On<typeof findCodeForRedemption>;
  /** False when the code was already used: concurrent redemptions meet here, and one wins. */
  markUsed: On<typeof markCodeUsed>;
}

export interface GrantRepository {
  create: On<typeof createGrant>;
  get: On<typeof getGrant>;
  revoke: On<typeof revokeGrant>;
  sessionEnded: On<typeof sessionEnded>;
  revokeJti(jti: string, reason: string, expiresAt: Date): Promise<void>;
  revokeSessionTokens(sessionId: string, reason: string, opts?: Partial<Parameters<typeof revokeSessionTokens>[3]>): Promise<void>;
}

export interface TokenRepository {
  insertOpaque: On<typeof insertOpaqueToken>;
  findByValue: On<typeof findTokenByValue>;
  /** The token with its family, grant and user, in one read (the refresh grant's). */
  findWithGrant: On<typeof findTokenWithGrant>;
  /** False when the refresh token was rotated already (a concurrent or repeated presentation). */
  markRotated: On<typeof markRotated>;
  createFamily: On<typeof createRefreshFamily>;
  /** Records where a family was refreshed from (the refresh grant audits a refresh from anywhere else). */
  noteRefreshIp: On<typeof noteFamilyRefreshIp>;
  getFamily: On<typeof getRefreshFamily>;
  revokeFamily: On<typeof revokeFamily>;
  isAccessTokenRevoked: On<typeof isAccessTokenRevoked>;
}

export interface UserRepository {
  get: On<typeof getUser>;
  findByLoginName: On<typeof findUserByLoginName>;
  getMachineKey: On<typeof getMachineKey>;
}

export interface SessionRepository {
  createUserAgent: On<typeof createUserAgent>;
  findUserAgent: On<typeof findUserAgent>;
  /** The browser of a user-agent cookie with its live sessions, in one read. */
  findBrowser: On<typeof browserWithSessions>;
  live: On<typeof liveSessions>;
  touch: On<typeof touchSession>;
  end: On<typeof endSessions>;
  openIdsOfUser: On<typeof openSessionIdsOfUser>;
}

export interface AuthRequestRepository {
  create: On<typeof createAuthRequest>;
  findPending: On<typeof findPendingAuthRequest>;
  update: On<typeof updateAuthRequest>;
  /** False when another request completed it first (it is single-use). */
  complete: On<typeof completeAuthRequest>;
}

export interface ConsentRepository {
  /** What each of the given users allowed a client (third-party clients ask before they finish). */
  of: On<typeof consentsOf>;
  grant: On<typeof grantConsent>;
}

export interface RoleRepository {
  /** The role keys a user or client holds for an API (the `roles` claim of its access tokens). */
  for: On<typeof rolesFor>;
  /** A user's roles at every API, by identifier (scope `roles`). */
  byApi: On<typeof rolesByApi>;
}

export interface AuditRepository {
  record: On<typeof recordAudit>;
}

export interface ReplayRepository {
  /** False when `jti` was seen before under `issuer` (assertions are single-use until they expire). */
  consumeOnce(issuer: string, jti: string, expiresAt: Date): Promise<boolean>;
}

/** What may run inside one transaction: everything is written together or not at all. */
export interface Repositories {
  /** The engine's clock (lib/clock.ts): the time every write and expiry check of the core uses. */
  readonly clock: Clock;
  readonly codes: CodeRepository;
  readonly grants: GrantRepository;
  readonly tokens: TokenRepository;
  readonly users: UserRepository;
  readonly sessions: SessionRepository;
  readonly authRequests: AuthRequestRepository;
  readonly consents: ConsentRepository;
  readonly roles: RoleRepository;
  readonly audit: AuditRepository;
  readonly replay: ReplayRepository;
}

/**
 * Seals and opens self-contained tokens with a key of this instance (lib/keys/token-sealer.ts
 * makes it from the master key): opaque access tokens are sealed, not stored.
 */
export type TokenSealer = {
  seal(payload: Record<string, unknown>): string;
  /** The payload, or undefined for anything not sealed by this sealer (tampered, truncated, another key). */
  open(token: string): Record<string, unknown> | undefined;
};

/**
 * The engine's store: the transactional repositories, plus the read-mostly ones served from the
 * engine's caches. Those are not offered inside a transaction: a cache must not be filled from a
 * transaction that may still roll back, and on PGlite (one connection) a read outside the open
 * transaction would wait for it to end. Grants read them before they open one
 * (lib/oauth/grants/transaction.ts).
 */
export interface Store extends Repositories {
  readonly clients: {
    get(id: string): Promise<Client | undefined>;
    /** Every client's origin settings (CORS of answers that name no client). */
    origins(): Promise<readonly ClientOrigins[]>;
  };
  /** The API resources (RFC 8707 resource indicators, their scopes and roles), cached. */
  readonly apis: { list(): Promise<Api[]> };
  readonly settings: { get(): Promise<Settings> };
  readonly keys: {
    /** The key tokens are signed with now. */
    signing(): Promise<ActiveKey>;
    /** Our published keys, for verifying what we signed; an unknown `kid` reloads them (rate-limited). */
    verification(): Promise<JWTVerifyGetKey>;
    /** The key set as served at /oauth/v2/keys, with its entity tag. */
    published(): Promise<{ body: string; etag: string }>;
    /** Seals and opens opaque access tokens (lib/keys/token-sealer.ts): they are not stored. */
    readonly sealer: TokenSealer;
  };
  /**
   * Access tokens found active, answered from memory for a few seconds (introspection and
   * userinfo run on every request of a resource server). `load` resolves the token when it is not
   * cached; only an active token (a value) is kept. Every revocation through these repositories
   * drops the cache when it commits, here and on the other instances.
   */
  readonly activeTokens: { through<T extends object>(token: string, load: () => Promise<T | undefined>): Promise<T | undefined> };
  /**
   * The read of a refresh token this instance issued, by the code grant or as a rotation's
   * successor (`tokens.findWithGrant`), remembered for that token's own rotation so that it needs no read:
   * `take` answers it once. Never trusted alone: the rotation's guard checks in the database
   * everything in it that can change (lib/store/tokens.ts markRotatedWrite).
   */
  readonly issuedRefreshTokens: Remembered<TokenWithGrant>;
  /**
   * The read of a code this instance issued (`codes.findForRedemption`), remembered for its
   * redemption so that it needs no read: `take` answers it once. Never trusted alone: marking the
   * code used checks in the database everything in it that can change (lib/store/codes.ts
   * markCodeUsedWrite).
   */
  readonly codeRedemptions: Remembered<Redemption>;
  /** The user claims a grant's authorization request asked for at userinfo (OIDC Core 5.5); cached, they never change. */
  readonly grantClaims: { userinfo(grantId: string): Promise<string[]> };
  readonly rateLimits: {
    /** Counts one event (or `increment`) under `key` in a fixed window shared by every instance. */
    hit(key: string, limit: number, windowSeconds: number, now?: Date, increment?: number): Promise<RateLimitResult>;
  };
  /** Runs `fn` in one database transaction: all its writes commit together, or none do. */
  transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T>;
  /**
   * Like `transaction`, and cheaper for work that reads, then inserts behind a guard (a grant):
   * its writes are first sent as one statement, and only when that cannot be (a guard lost, a
   * revocation, a read after a write) does it run again in a transaction
   * (lib/store/write.ts). So `fn` may run twice and must do nothing outside `tx` that matters.
   */
  atomically<T>(fn: (tx: Repositories) => Promise<T>): Promise<T>;
}
