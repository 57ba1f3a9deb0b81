import { createLocalJWKSet, exportJWK, generateKeyPair, type JWK } from "jose";
import { randomToken, sha256 } from "@/lib/crypto";
import type { ActiveKey } from "@/lib/keys/signing-keys";
import type { Api } from "@/lib/store/apis";
import type { AuditEvent, Actor } from "@/lib/store/audit";
import { AUTH_REQUEST_LIFETIME_SECONDS, type AuthRequest } from "@/lib/store/auth-requests";
import type { Client } from "@/lib/store/clients";
import type { AuthorizationCode } from "@/lib/store/codes";
import type { Grant } from "@/lib/store/grants";
import type { Remembered, Repositories, Store } from "@/lib/store/repositories";
import type { Settings } from "@/lib/store/settings";
import type { RefreshFamily, StoredToken } from "@/lib/store/tokens";
import type { Session } from "@/lib/store/sessions";
import type { MachineKey, User } from "@/lib/store/users";
import { dateOf } from "@/lib/clock";
import { randomBytes } from "node:crypto";
import { tokenSealer } from "@/lib/keys/token-sealer";
import { FakeClock } from "./fake-clock";

/**
 * An in-memory implementation of the repositories (lib/store/repositories.ts) for unit tests of
 * the protocol core: no database, every write visible, and failures injectable at any write.
 * A transaction works on a copy of the state and replaces the state only when its function
 * returns, so a failure inside one leaves nothing behind, as a database transaction would.
 * Only what the protocol core's unit tests use is implemented; anything else throws, so a test
 * notices. Browsers, sessions and pending authorization requests follow lib/store/sessions.ts and
 * lib/store/auth-requests.ts: expiry, single use, the user agent's own rows only.
 */
type State = {
  codes: Map<string, AuthorizationCode>;
  grants: Map<string, Grant>;
  tokens: Map<string, StoredToken>;
  families: Map<string, RefreshFamily>;
  revocations: { type: string; id: string; at: Date }[];
  jtis: Set<string>;
  audit: { actor: Actor; event: AuditEvent }[];
  /** User agents by the SHA-256 of their cookie. */
  userAgents: Map<string, { id: string }>;
  sessions: Map<string, Session>;
  /** Pending authorization requests by the SHA-256 of their id. */
  authRequests: Map<string, AuthRequest>;
};

function cloneState(s: State): State {
  return {
    codes: new Map([...s.codes].map(([k, v]) => [k, { ...v }])),
    grants: new Map([...s.grants].map(([k, v]) => [k, { ...v }])),
    tokens: new Map([...s.tokens].map(([k, v]) => [k, { ...v }])),
    families: new Map([...s.families].map(([k, v]) => [k, { ...v }])),
    revocations: [...s.revocations],
    jtis: new Set(s.jtis),
    audit: [...s.audit],
    userAgents: new Map(s.userAgents),
    sessions: new Map([...s.sessions].map(([k, v]) => [k, { ...v }])),
    authRequests: new Map([...s.authRequests].map(([k, v]) => [k, { ...v }])),
  };
}

const FORGETFUL: Remembered<never> = { remember: () => undefined, take: () => undefined };

const unsupported = (what: string) => () => {
  throw new Error(`memory store: ${what} is not implemented`);
};

export class MemoryStore {
  state: State = {
    codes: new Map(),
    grants: new Map(),
    tokens: new Map(),
    families: new Map(),
    revocations: [],
    jtis: new Set(),
    audit: [],
    userAgents: new Map(),
    sessions: new Map(),
    authRequests: new Map(),
  };
  readonly users = new Map<string, User>();
  readonly clients = new Map<string, Client>();
  /** Machine users' registered public keys by key id (jwt-bearer assertions name one in `kid`). */
  readonly machineKeys = new Map<string, MachineKey>();
  /** The API resources (RFC 8707) the store lists. */
  readonly apis: Api[] = [];
  /** Roles held at an API: `user:<id>` or `client:<id>`, then the API's id, then the role keys. */
  readonly roles = new Map<string, Map<string, string[]>>();
  /** Names of writes made so far (e.g. `tokens.insertOpaque`), committed or not. */
  readonly writes: string[] = [];
  /** The next write with this name throws (once). */
  failNext: string | null = null;
  transactions = 0;

  private async transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> {
    this.transactions += 1;
    const draft = cloneState(this.state);
    const result = await fn(this.repositories(() => draft));
    this.state = draft;
    return result;
  }
  /** The time the repositories stamp and compare with; a test moves it instead of sleeping. */
  readonly clock = new FakeClock(Date.now());

  private constructor(
    readonly settings: Settings,
    readonly signingKey: ActiveKey,
    readonly jwks: { keys: JWK[] },
  ) {}

  /** Opaque access tokens are sealed with a key of this store's own. */
  readonly sealer = tokenSealer(randomBytes(32), "https://unit.test");

  static async create(settings: Settings): Promise<MemoryStore> {
    const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
    const kid = "unit-key";
    const jwk = { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" };
    return new MemoryStore(settings, { kid, alg: "RS256", privateKey }, { keys: [jwk] });
  }

  /**
   * Seeds a browser signed in as `userId` (what the login form handlers do through
   * recordAuthentication): a user agent, a session with the given lifetimes, and the cookie value.
   */
  signIn(userId: string, opts: { amr?: string[]; idleSeconds?: number; absoluteSeconds?: number; cookie?: string } = {}): { cookie: string; userAgentId: string; sessionId: string } {
    const now = dateOf(this.clock);
    let cookie = opts.cookie;
    let ua = cookie ? this.state.userAgents.get(sha256(cookie)) : undefined;
    if (!cookie || !ua) {
      cookie = randomToken(32);
      ua = { id: randomToken(16) };
      this.state.userAgents.set(sha256(cookie), ua);
    }
    const id = randomToken(16);
    this.state.sessions.set(id, {
      id,
      userAgentId: ua.id,
      userId,
      authTime: now,
      amr: opts.amr ?? ["pwd"],
      createdAt: now,
      lastActiveAt: now,
      idleExpiresAt: new Date(now.getTime() + (opts.idleSeconds ?? 3600) * 1000),
      absoluteExpiresAt: new Date(now.getTime() + (opts.absoluteSeconds ?? 86_400) * 1000),
      endedAt: null,
      ip: null,
      userAgent: null,
    });
    return { cookie, userAgentId: ua.id, sessionId: id };
  }

  private write(name: string): void {
    this.writes.push(name);
    if (this.failNext === name) {
      this.failNext = null;
      throw new Error(`injected failure at ${name}`);
    }
  }

  private repositories(s: () => State): Repositories {
    const repos: Repositories = {
      clock: this.clock,
      codes: {
        create: (c) => {
          this.write("codes.create");
          const code = randomToken(32);
          const { lifetimeSeconds, ...rest } = c;
          const stored = { ...rest, codeHash: sha256(code), createdAt: dateOf(this.clock), expiresAt: new Date(this.clock.now() + lifetimeSeconds * 1000), usedAt: null };
          s().codes.set(sha256(code), stored);
          return Promise.resolve({ code, stored });
        },
        find: (code) => Promise.resolve(s().codes.get(sha256(code))),
        findForRedemption: (code) => {
          const c = s().codes.get(sha256(code));
          // Sessions of codes never end here (grants.sessionEnded).
          return Promise.resolve(c && { code: c, grant: s().grants.get(c.grantId), user: this.users.get(c.userId), sessionEnded: false });
        },
        markUsed: (r, now = dateOf(this.clock)) => {
          this.write("codes.markUsed");
          // What the Drizzle store's guard checks (lib/store/codes.ts markCodeUsedWrite); sessions never end here.
          const c = s().codes.get(r.codeHash);
          if (!c || c.usedAt || c.expiresAt <= now || s().grants.get(c.grantId)?.revokedAt !== null) return Promise.resolve(false);
          const user = this.users.get(c.userId);
          if (!user || user.locked || (r.userVersion !== null && user.updatedAt.getTime() !== r.userVersion.getTime())) return Promise.resolve(false);
          c.usedAt = now;
          return Promise.resolve(true);
        },
      },
      grants: {
        create: (g) => {
          this.write("grants.create");
          const id = randomToken(16);
          s().grants.set(id, { id, claims: null, resources: [], createdAt: dateOf(this.clock), revokedAt: null, ...g });
          return Promise.resolve({ id });
        },
        get: (id) => Promise.resolve(s().grants.get(id)),
        revoke: (id, reason, now = dateOf(this.clock)) => {
          this.write("grants.revoke");
          const g = s().grants.get(id);
          if (g) g.revokedAt = now;
          for (const f of s().families.values()) if (f.grantId === id && !f.revokedAt) Object.assign(f, { revokedAt: now, revokedReason: reason });
          for (const t of s().tokens.values()) if (t.grantId === id && !t.revokedAt) t.revokedAt = now;
          s().revocations.push({ type: "grant", id, at: now });
          return Promise.resolve();
        },
        sessionEnded: () => Promise.resolve(false),
        revokeJti: (jti) => {
          this.write("grants.revokeJti");
          s().revocations.push({ type: "jti", id: jti, at: dateOf(this.clock) });
          return Promise.resolve();
        },
        revokeSessionTokens: unsupported("grants.revokeSessionTokens"),
      },
      tokens: {
        insertOpaque: (t) => {
          this.write(`tokens.insertOpaque.${t.kind}`);
          const value = t.value ?? randomToken(32);
          const id = randomToken(16);
          s().tokens.set(id, {
            id,
            kind: t.kind,
            tokenHash: sha256(value),
            clientId: t.clientId,
            userId: t.userId,
            sessionId: t.sessionId,
            grantId: t.grantId,
            familyId: t.familyId ?? null,
            scopes: t.scopes,
            audience: t.audience,
            actor: t.actor ?? null,
            createdAt: dateOf(this.clock),
            expiresAt: t.expiresAt,
            revokedAt: null,
            rotatedAt: null,
          });
          return Promise.resolve({ value, id });
        },
        findByValue: (value) => Promise.resolve([...s().tokens.values()].find((t) => t.tokenHash === sha256(value))),
        findWithGrant: (value) => {
          const t = [...s().tokens.values()].find((x) => x.tokenHash === sha256(value));
          return Promise.resolve(
            t && { token: t, family: t.familyId ? s().families.get(t.familyId) : undefined, grant: s().grants.get(t.grantId), user: t.userId ? this.users.get(t.userId) : undefined },
          );
        },
        markRotated: (r, now = dateOf(this.clock)) => {
          this.write("tokens.markRotated");
          // What the Drizzle store's guard checks (lib/store/tokens.ts markRotatedWrite).
          const t = s().tokens.get(r.id);
          if (!t || t.tokenHash !== sha256(r.value) || t.rotatedAt || t.revokedAt || t.expiresAt <= now) return Promise.resolve(false);
          if (s().families.get(t.familyId ?? "")?.revokedAt !== null || s().grants.get(t.grantId)?.revokedAt !== null) return Promise.resolve(false);
          const user = t.userId ? this.users.get(t.userId) : undefined;
          if (t.userId && (!user || user.locked || (r.userVersion !== null && user.updatedAt.getTime() !== r.userVersion.getTime()))) return Promise.resolve(false);
          t.rotatedAt = now;
          return Promise.resolve(true);
        },
        createFamily: (f) => {
          this.write("tokens.createFamily");
          const id = randomToken(16);
          s().families.set(id, { id, actor: null, notAfter: null, createdAt: dateOf(this.clock), revokedAt: null, revokedReason: null, lastRefreshIp: null, ...f });
          return Promise.resolve({ id });
        },
        noteRefreshIp: (id, ip) => {
          this.write("tokens.noteRefreshIp");
          const f = s().families.get(id);
          if (f) f.lastRefreshIp = ip;
          return Promise.resolve();
        },
        getFamily: (id) => Promise.resolve(s().families.get(id)),
        revokeFamily: (id, reason, now = dateOf(this.clock)) => {
          this.write("tokens.revokeFamily");
          const f = s().families.get(id);
          if (f) Object.assign(f, { revokedAt: now, revokedReason: reason });
          for (const t of s().tokens.values()) if (t.familyId === id && !t.revokedAt) t.revokedAt = now;
          if (f) {
            const g = s().grants.get(f.grantId);
            if (g) g.revokedAt = now;
            s().revocations.push({ type: "grant", id: f.grantId, at: now });
          }
          return Promise.resolve();
        },
        isAccessTokenRevoked: (t) =>
          Promise.resolve(
            s().revocations.some(
              (r) =>
                (r.type === "jti" && r.id === t.jti) ||
                (r.type === "grant" && r.id === t.grantId && (t.iat == null || t.iat <= Math.floor(r.at.getTime() / 1000))),
            ),
          ),
      },
      users: {
        get: (id) => Promise.resolve(this.users.get(id)),
        findByLoginName: (name) => Promise.resolve([...this.users.values()].find((u) => u.username.toLowerCase() === name.toLowerCase())),
        getMachineKey: (keyId) => Promise.resolve(this.machineKeys.get(keyId)),
      },
      sessions: {
        createUserAgent: () => {
          this.write("sessions.createUserAgent");
          const cookie = randomToken(32);
          const id = randomToken(16);
          s().userAgents.set(sha256(cookie), { id });
          return Promise.resolve({ id, cookie });
        },
        findUserAgent: (cookie) => Promise.resolve(!cookie || cookie.length > 100 ? undefined : s().userAgents.get(sha256(cookie))),
        findBrowser: async (cookie, now = dateOf(this.clock)) => {
          const ua = await repos.sessions.findUserAgent(cookie);
          return ua && { id: ua.id, sessions: await repos.sessions.live(ua.id, now) };
        },
        // As liveSessions: not ended, neither expiry passed, the user exists and is not locked; by username.
        live: (userAgentId, now = dateOf(this.clock)) =>
          Promise.resolve(
            [...s().sessions.values()]
              .filter((x) => x.userAgentId === userAgentId && !x.endedAt && x.idleExpiresAt > now && x.absoluteExpiresAt > now)
              .flatMap((x) => {
                const u = this.users.get(x.userId);
                if (!u || u.locked) return [];
                const user = { ...u, hasSecondFactor: false, passwordChangedAt: null };
                return [{ ...x, user }];
              })
              .sort((a, b) => (a.user.username < b.user.username ? -1 : a.user.username > b.user.username ? 1 : 0)),
          ),
        touch: (sessionId, lifetimes, now = dateOf(this.clock)) => {
          this.write("sessions.touch");
          const x = s().sessions.get(sessionId);
          if (x) Object.assign(x, { lastActiveAt: now, idleExpiresAt: new Date(Math.min(x.absoluteExpiresAt.getTime(), now.getTime() + lifetimes.sessionIdle * 1000)) });
          return Promise.resolve();
        },
        end: (userAgentId, sessionIds, now = dateOf(this.clock)) => {
          this.write("sessions.end");
          const ended = [...s().sessions.values()].filter((x) => x.userAgentId === userAgentId && !x.endedAt && (!sessionIds || sessionIds.includes(x.id)));
          for (const x of ended) x.endedAt = now;
          return Promise.resolve(ended.map((x) => ({ ...x })));
        },
        openIdsOfUser: (userAgentId, userId) =>
          Promise.resolve([...s().sessions.values()].filter((x) => x.userAgentId === userAgentId && x.userId === userId && !x.endedAt).map((x) => x.id)),
      },
      authRequests: {
        create: (data, now = dateOf(this.clock)) => {
          this.write("authRequests.create");
          const id = randomToken(32);
          const row: AuthRequest = {
            state: null,
            nonce: null,
            codeChallenge: null,
            codeChallengeMethod: null,
            prompt: [],
            maxAge: null,
            loginHint: null,
            hintSubject: null,
            claims: null,
            acrValues: [],
            webauthnChallenge: null,
            resources: [],
            loginName: null,
            sessionId: null,
            formError: null,
            formValues: null,
            consentDenied: false,
            ...data,
            idHash: sha256(id),
            createdAt: now,
            expiresAt: new Date(now.getTime() + AUTH_REQUEST_LIFETIME_SECONDS * 1000),
            completedAt: null,
          };
          s().authRequests.set(row.idHash, row);
          return Promise.resolve({ id, row: { ...row } });
        },
        findPending: (id, userAgentId, now = dateOf(this.clock)) => {
          if (!id || id.length > 100) return Promise.resolve(undefined);
          const r = s().authRequests.get(sha256(id));
          return Promise.resolve(r && r.userAgentId === userAgentId && !r.completedAt && r.expiresAt > now ? { ...r } : undefined);
        },
        update: (id, patch) => {
          this.write("authRequests.update");
          const r = s().authRequests.get(sha256(id));
          if (r) Object.assign(r, patch);
          return Promise.resolve();
        },
        complete: (id, now = dateOf(this.clock)) => {
          this.write("authRequests.complete");
          const r = s().authRequests.get(sha256(id));
          if (!r || r.completedAt) return Promise.resolve(false);
          r.completedAt = now;
          return Promise.resolve(true);
        },
      },
      roles: {
        for: (holder, apiId) => Promise.resolve([...(this.roles.get("userId" in holder ? `user:${holder.userId}` : `client:${holder.clientId}`)?.get(apiId) ?? [])]),
        byApi: (userId) =>
          Promise.resolve(
            Object.fromEntries(
              [...(this.roles.get(`user:${userId}`) ?? [])].flatMap(([apiId, keys]) => {
                const api = this.apis.find((a) => a.id === apiId);
                return api && keys.length ? [[api.identifier, [...keys].sort()]] : [];
              }),
            ),
          ),
      },
      consents: {
        of: () => Promise.resolve({}),
        grant: unsupported("consents.grant"),
      },
      audit: {
        record: (actor, event) => {
          this.write("audit.record");
          s().audit.push({ actor, event });
          return Promise.resolve();
        },
      },
      replay: {
        consumeOnce: (issuer, jti) => {
          this.write("replay.consumeOnce");
          const key = `${issuer}\u0001${jti}`;
          if (s().jtis.has(key)) return Promise.resolve(false);
          s().jtis.add(key);
          return Promise.resolve(true);
        },
      },
    };
    return repos;
  }

  /** The Store the engine would hand the core. */
  get store(): Store {
    return {
      ...this.repositories(() => this.state),
      clients: { get: (id) => Promise.resolve(this.clients.get(id)), origins: () => Promise.resolve([...this.clients.values()]) },
      apis: { list: () => Promise.resolve([...this.apis]) },
      settings: { get: () => Promise.resolve(this.settings) },
      keys: {
        signing: () => Promise.resolve(this.signingKey),
        verification: () => Promise.resolve(createLocalJWKSet(this.jwks)),
        published: () => Promise.resolve({ body: JSON.stringify(this.jwks), etag: '"unit"' }),
        sealer: this.sealer,
      },
      // No cache: every resolution reads the state, so a test sees each write at once.
      activeTokens: { through: (_token, load) => load() },
      // Nothing remembered: every rotation reads.
      // Nothing is remembered here: every grant reads.
      issuedRefreshTokens: FORGETFUL,
      codeRedemptions: FORGETFUL,
      grantClaims: { userinfo: (grantId) => Promise.resolve(this.state.grants.get(grantId)?.claims?.userinfo ?? []) },
      rateLimits: { hit: (_key, limit, windowSeconds) => Promise.resolve({ allowed: true, count: 1, limit, retryAfterSeconds: windowSeconds }) },
      transaction: (fn) => this.transaction(fn),
      // The Drizzle store's one-statement first try is an optimisation with the same outcome.
      atomically: (fn) => this.transaction(fn),
    };
  }
}
