import { getApis, rolesByApi, rolesFor } from "./apis";
import { consentsOf, grantConsent } from "./consents";
import { notifyOnCommit, type Database, type Db, type Executor } from "@/lib/db/client";
import { sha256 } from "@/lib/crypto";
import { dateOf, type Clock } from "@/lib/clock";
import type { Caches } from "./caches";
import { recordAudit, recordAuditWrite } from "./audit";
import { completeAuthRequest, completeAuthRequestWrite, createAuthRequest, findPendingAuthRequest, updateAuthRequest } from "./auth-requests";
import { getClient, getClientOrigins } from "./clients";
import { createAuthorizationCode, createAuthorizationCodeWrite, findAuthorizationCode, findCodeForRedemption, markCodeUsed, markCodeUsedWrite } from "./codes";
import { createGrant, createGrantWrite, getGrant, revokeGrant, revokeJti, revokeSessionTokens, sessionEnded } from "./grants";
import { consumeJtiOnce, consumeJtiOnceWrite } from "./jti";
import { applyInvalidations, INVALIDATION_CHANNEL, mutate, type Invalidation } from "./invalidation";
import { hitRateLimit } from "./rate-limit";
import type { Remembered, Repositories, Store } from "./repositories";
import type { TtlCache } from "@/lib/cache/ttl-cache";
import { NOT_BROWSER_TABLES, rememberedBrowsers } from "./remembered-browsers";
import { browserWithSessions, createUserAgent, endSessions, findUserAgent, liveSessions, openSessionIdsOfUser, touchSession, touchSessionWrite } from "./sessions";
import { getSettings } from "./settings";
import {
  createRefreshFamily,
  createRefreshFamilyWrite,
  noteFamilyRefreshIp,
  noteFamilyRefreshIpWrite,
  findTokenByValue,
  findTokenWithGrant,
  getRefreshFamily,
  insertOpaqueToken,
  insertOpaqueTokenWrite,
  isAccessTokenRevoked,
  markRotated,
  markRotatedWrite,
  revokeFamily,
} from "./tokens";
import { findUserByLoginName, getMachineKey, getUser } from "./users";
import { isGuardLost, NeedsTransaction, WriteBatch } from "./write";

/** What a revocation makes stale: every access token answered from memory. */
const TOKENS_REVOKED: Invalidation[] = [{ cache: "accessTokens" }];

/**
 * The repositories on one database handle: the engine's database, or an open transaction.
 * `revoked` is called after every write that can make an access token inactive, once that write
 * is on `db`: the caller drops the cached active tokens when it commits.
 */
export function repositoriesOn(db: Executor, clock: Clock, revoked: () => Promise<void> = () => Promise.resolve()): Repositories {
  // A time the caller leaves out is the engine clock's now.
  const at = (now?: Date) => now ?? dateOf(clock);
  const revoking =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const result = await write(...args);
      await revoked();
      return result;
    };
  return {
    clock,
    codes: {
      create: (c, now) => createAuthorizationCode(db, c, at(now)),
      find: (code) => findAuthorizationCode(db, code),
      findForRedemption: (code, now) => findCodeForRedemption(db, code, at(now)),
      markUsed: (r, now) => markCodeUsed(db, r, at(now)),
    },
    grants: {
      create: (g) => createGrant(db, g),
      get: (id) => getGrant(db, id),
      revoke: revoking((id: string, reason: string, now?: Date, horizon?: Date) => revokeGrant(db, id, reason, at(now), horizon)),
      sessionEnded: (id, now) => sessionEnded(db, id, at(now)),
      revokeJti: revoking((jti: string, reason: string, expiresAt: Date) => revokeJti(db, jti, reason, expiresAt)),
      revokeSessionTokens: revoking((id: string, reason: string, opts?: Partial<Parameters<typeof revokeSessionTokens>[3]>) =>
        revokeSessionTokens(db, id, reason, { ...opts, now: at(opts?.now) }),
      ),
    },
    tokens: {
      insertOpaque: (t) => insertOpaqueToken(db, t),
      findByValue: (value) => findTokenByValue(db, value),
      findWithGrant: (value) => findTokenWithGrant(db, value),
      markRotated: (r, now) => markRotated(db, r, at(now)),
      createFamily: (f) => createRefreshFamily(db, f),
      noteRefreshIp: (id, ip) => noteFamilyRefreshIp(db, id, ip),
      getFamily: (id) => getRefreshFamily(db, id),
      revokeFamily: revoking((id: string, reason: string, now?: Date) => revokeFamily(db, id, reason, at(now))),
      isAccessTokenRevoked: (t) => isAccessTokenRevoked(db, t),
    },
    users: {
      get: (id) => getUser(db, id),
      findByLoginName: (name, primaryDomain) => findUserByLoginName(db, name, primaryDomain),
      getMachineKey: (kid) => getMachineKey(db, kid),
    },
    sessions: {
      createUserAgent: () => createUserAgent(db),
      findUserAgent: (cookie) => findUserAgent(db, cookie),
      findBrowser: (cookie, now) => browserWithSessions(db, cookie, at(now)),
      live: (uaId, now) => liveSessions(db, uaId, at(now)),
      touch: (id, lifetimes, now) => touchSession(db, id, lifetimes, at(now)),
      end: (uaId, ids, now) => endSessions(db, uaId, ids, at(now)),
      openIdsOfUser: (uaId, userId) => openSessionIdsOfUser(db, uaId, userId),
    },
    authRequests: {
      create: (data, now) => createAuthRequest(db, data, at(now)),
      findPending: (id, uaId, now) => findPendingAuthRequest(db, id, uaId, at(now)),
      update: (id, patch) => updateAuthRequest(db, id, patch),
      complete: (id, now) => completeAuthRequest(db, id, at(now)),
    },
    roles: { for: (holder, apiId) => rolesFor(db, holder, apiId), byApi: (userId) => rolesByApi(db, userId) },
    consents: {
      of: (clientId, userIds) => consentsOf(db, clientId, userIds),
      grant: (userId, clientId, scopes, now) => grantConsent(db, userId, clientId, scopes, at(now)),
    },
    audit: { record: (actor, event) => recordAudit(db, actor, event) },
    replay: { consumeOnce: (issuer, jti, expiresAt) => consumeJtiOnce(db, issuer, jti, expiresAt) },
  };
}

/**
 * The repositories for `Store.atomically`'s first try: reads go to the database as they come,
 * inserts and guards are collected in `batch` and sent as one statement at the end (write.ts).
 * What one statement cannot do throws `NeedsTransaction`, and the work runs again in a
 * transaction: every other write (revocations, new sessions and browsers, consents, new or
 * changed authorization requests), and a read of what the work may have written already. Users, roles and consents are never written by
 * such work, so reading them after a write is fine.
 */
function batchedRepositories(direct: Repositories, db: Executor, batch: WriteBatch): Repositories {
  const clock = direct.clock;
  const at = (now?: Date) => now ?? dateOf(clock);
  const refuse =
    (what: string) =>
    (..._: unknown[]): Promise<never> =>
      Promise.reject(new NeedsTransaction(what));
  const beforeWrites =
    <A extends unknown[], R>(what: string, read: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      batch.empty ? read(...args) : Promise.reject(new NeedsTransaction(`${what} after a write`));
  return {
    ...direct,
    codes: {
      create: (c, now) => batch.add(createAuthorizationCodeWrite(db, c, at(now))),
      find: beforeWrites("codes.find", direct.codes.find),
      findForRedemption: beforeWrites("codes.findForRedemption", direct.codes.findForRedemption),
      markUsed: (r, now) => batch.guard(markCodeUsedWrite(db, r, at(now))),
    },
    grants: {
      create: (g) => batch.add(createGrantWrite(db, g)),
      get: beforeWrites("grants.get", direct.grants.get),
      revoke: refuse("grants.revoke"),
      sessionEnded: beforeWrites("grants.sessionEnded", direct.grants.sessionEnded),
      revokeJti: refuse("grants.revokeJti"),
      revokeSessionTokens: refuse("grants.revokeSessionTokens"),
    },
    tokens: {
      insertOpaque: (t) => batch.add(insertOpaqueTokenWrite(db, t)),
      findByValue: beforeWrites("tokens.findByValue", direct.tokens.findByValue),
      findWithGrant: beforeWrites("tokens.findWithGrant", direct.tokens.findWithGrant),
      markRotated: (r, now) => batch.guard(markRotatedWrite(db, r, at(now))),
      createFamily: (f) => batch.add(createRefreshFamilyWrite(db, f)),
      noteRefreshIp: (id, ip) => batch.add(noteFamilyRefreshIpWrite(db, id, ip)),
      getFamily: beforeWrites("tokens.getFamily", direct.tokens.getFamily),
      revokeFamily: refuse("tokens.revokeFamily"),
      isAccessTokenRevoked: beforeWrites("tokens.isAccessTokenRevoked", direct.tokens.isAccessTokenRevoked),
    },
    sessions: {
      createUserAgent: refuse("sessions.createUserAgent"),
      findUserAgent: beforeWrites("sessions.findUserAgent", direct.sessions.findUserAgent),
      findBrowser: beforeWrites("sessions.findBrowser", direct.sessions.findBrowser),
      live: beforeWrites("sessions.live", direct.sessions.live),
      touch: (id, lifetimes, now) => batch.add(touchSessionWrite(db, id, lifetimes, at(now))),
      end: refuse("sessions.end"),
      openIdsOfUser: beforeWrites("sessions.openIdsOfUser", direct.sessions.openIdsOfUser),
    },
    authRequests: {
      create: refuse("authRequests.create"),
      findPending: beforeWrites("authRequests.findPending", direct.authRequests.findPending),
      update: refuse("authRequests.update"),
      complete: (id, now) => batch.guard(completeAuthRequestWrite(db, id, at(now))),
    },
    consents: { of: direct.consents.of, grant: refuse("consents.grant") },
    audit: { record: (actor, event) => batch.add(recordAuditWrite(db, actor, event)) },
    replay: { consumeOnce: (issuer, jti, expiresAt) => batch.guard(consumeJtiOnceWrite(db, issuer, jti, expiresAt)) },
  };
}

/** Reads remembered in `cache` by the SHA-256 of their value: the value itself is never kept. */
function rememberedIn<T>(cache: TtlCache<T>): Remembered<T> {
  return {
    remember: (value, read) => {
      cache.put(sha256(value), read);
    },
    take: (value) => cache.take(sha256(value)),
  };
}

/** Browsers are read through memory while the write watch allows (remembered-browsers.ts). */
function withRememberedBrowsers(repos: Repositories, scope: StoreScope): Repositories {
  const watch = scope.database.watchWrites?.(NOT_BROWSER_TABLES);
  if (!watch) return repos;
  const find = rememberedBrowsers(repos.sessions.findBrowser, scope.caches.browsers, watch);
  return { ...repos, sessions: { ...repos.sessions, findBrowser: (cookie, now) => find(cookie, now ?? dateOf(scope.clock)) } };
}

/** What the store needs of the engine: its database, caches and identity (for invalidations), and its keys. */
export type StoreScope = { db: Db; caches: Caches; clock: Clock; id: string; database: Pick<Database, "kind" | "query" | "watchWrites">; keys: Store["keys"] };

/**
 * The engine's store on Drizzle: repositories on the database, cached reads through the engine's
 * caches. The keys come from lib/keys (which decrypts and caches them), handed in by the engine.
 */
export function drizzleStore(scope: StoreScope): Store {
  // A revocation outside a transaction has committed when its write returns: drop the cached
  // tokens here, and tell the other instances (PostgreSQL delivers the NOTIFY at once).
  const revokedNow = async () => {
    applyInvalidations(scope.caches, TOKENS_REVOKED);
    if (scope.database.kind === "pg") await notifyOnCommit(scope.db, INVALIDATION_CHANNEL, JSON.stringify({ from: scope.id, list: TOKENS_REVOKED }));
  };
  // The store's own repositories on the database, also the reads of every batched first try.
  const direct = withRememberedBrowsers(repositoriesOn(scope.db, scope.clock, revokedNow), scope);
  return {
    ...direct,
    clients: { get: (id) => getClient(scope, id), origins: () => getClientOrigins(scope) },
    apis: { list: () => getApis(scope) },
    settings: { get: () => getSettings(scope) },
    keys: scope.keys,
    activeTokens: {
      async through<T extends object>(token: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
        const key = sha256(token);
        const value = (await scope.caches.accessTokens.get(key, load)) as T | undefined;
        // Only active tokens are kept: made-up tokens must not push real ones out of the cache.
        if (!value) scope.caches.accessTokens.invalidate(key);
        return value;
      },
    },
    issuedRefreshTokens: rememberedIn(scope.caches.issuedRefreshTokens),
    codeRedemptions: rememberedIn(scope.caches.codeRedemptions),
    grantClaims: {
      userinfo: (grantId) => scope.caches.grantClaims.get(grantId, async () => (await getGrant(scope.db, grantId))?.claims?.userinfo ?? []),
    },
    rateLimits: { hit: (key, limit, windowSeconds, now, increment) => hitRateLimit(scope.db, key, limit, windowSeconds, now ?? dateOf(scope.clock), increment) },
    transaction,
    // First as one statement (batchedRepositories); in a transaction when that cannot be.
    atomically: async (fn) => {
      const batch = new WriteBatch();
      try {
        const result = await fn(batchedRepositories(direct, scope.db, batch));
        await batch.flush(scope.database.query);
        return result;
      } catch (e) {
        if (e instanceof NeedsTransaction || isGuardLost(e)) return transaction(fn);
        throw e;
      }
    },
  };

  // Revocations inside the transaction drop the cached tokens once it has committed (mutate).
  function transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> {
    let revokedInside = false;
    return mutate(
      scope,
      () => (revokedInside ? TOKENS_REVOKED : []),
      (tx) =>
        fn(
          repositoriesOn(tx, scope.clock, () => {
            revokedInside = true;
            return Promise.resolve();
          }),
        ),
    );
  }
}
