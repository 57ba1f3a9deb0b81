import { createLocalJWKSet, exportJWK, generateKeyPair, type JWK } from "jose";
import { randomToken, sha256 } from "@/lib/crypto";
import type { ActiveKey } from "@/lib/keys/signing-keys";
import type { AuditEvent, Actor } from "@/lib/store/audit";
import type { Client } from "@/lib/store/clients";
import type { AuthorizationCode } from "@/lib/store/codes";
import type { Grant } from "@/lib/store/grants";
import type { Repositories, Store } from "@/lib/store/repositories";
import type { Settings } from "@/lib/store/settings";
import type { RefreshFamily, StoredToken } from "@/lib/store/tokens";
import type { User } from "@/lib/store/users";
import { dateOf } from "@/lib/clock";
import { FakeClock } from "./fake-clock";

/**
 * An in-memory implementation of the repositories (lib/store/repositories.ts) for unit tests of
 * the protocol core: no database, every write visible, and failures injectable at any write.
 * A transaction works on a copy of the state and replaces the state only when its function
 * returns, so a failure inside one leaves nothing behind, as a database transaction would.
 * Only what the grants use is implemented; anything else throws, so a test notices.
 */
type State = {
  codes: Map<string, AuthorizationCode>;
  grants: Map<string, Grant>;
  tokens: Map<string, StoredToken>;
  families: Map<string, RefreshFamily>;
  revocations: { type: string; id: string; at: Date }[];
  jtis: Set<string>;
  audit: { actor: Actor; event: AuditEvent }[];
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
  };
}

const unsupported = (what: string) => () => {
  throw new Error(`memory store: ${what} is not implemented`);
};

export class MemoryStore {
  state: State = { codes: new Map(), grants: new Map(), tokens: new Map(), families: new Map(), revocations: [], jtis: new Set(), audit: [] };
  readonly users = new Map<string, User>();
  readonly clients = new Map<string, Client>();
  /** Names of writes made so far (e.g. `tokens.insertOpaque`), committed or not. */
  readonly writes: string[] = [];
  /** The next write with this name throws (once). */
  failNext: string | null = null;
  transactions = 0;
  /** The time the repositories stamp and compare with; a test moves it instead of sleeping. */
  readonly clock = new FakeClock(Date.now());

  private constructor(
    readonly settings: Settings,
    readonly signingKey: ActiveKey,
    readonly jwks: { keys: JWK[] },
  ) {}

  static async create(settings: Settings): Promise<MemoryStore> {
    const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
    const kid = "unit-key";
    const jwk = { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" };
    return new MemoryStore(settings, { kid, alg: "RS256", privateKey }, { keys: [jwk] });
  }

  private write(name: string): void {
    this.writes.push(name);
    if (this.failNext === name) {
      this.failNext = null;
      throw new Error(`injected failure at ${name}`);
    }
  }

  private repositories(s: () => State): Repositories {
    return {
      clock: this.clock,
      codes: {
        create: (c) => {
          this.write("codes.create");
          const code = randomToken(32);
          const { lifetimeSeconds, ...rest } = c;
          s().codes.set(sha256(code), { ...rest, codeHash: sha256(code), createdAt: dateOf(this.clock), expiresAt: new Date(this.clock.now() + lifetimeSeconds * 1000), usedAt: null });
          return Promise.resolve(code);
        },
        find: (code) => Promise.resolve(s().codes.get(sha256(code))),
        markUsed: (hash, now = dateOf(this.clock)) => {
          this.write("codes.markUsed");
          const c = s().codes.get(hash);
          if (!c || c.usedAt) return Promise.resolve(false);
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
        revoke: (id, now = dateOf(this.clock)) => {
          this.write("tokens.revoke");
          const t = s().tokens.get(id);
          if (t && !t.revokedAt) t.revokedAt = now;
          return Promise.resolve();
        },
        markRotated: (id, now = dateOf(this.clock)) => {
          this.write("tokens.markRotated");
          const t = s().tokens.get(id);
          if (!t || t.rotatedAt || t.revokedAt) return Promise.resolve(false);
          t.rotatedAt = now;
          return Promise.resolve(true);
        },
        createFamily: (f) => {
          this.write("tokens.createFamily");
          const id = randomToken(16);
          s().families.set(id, { id, actor: null, createdAt: dateOf(this.clock), revokedAt: null, revokedReason: null, ...f });
          return Promise.resolve({ id });
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
        getMachineKey: () => Promise.resolve(undefined),
      },
      sessions: {
        createUserAgent: unsupported("sessions.createUserAgent"),
        findUserAgent: () => Promise.resolve(undefined),
        live: () => Promise.resolve([]),
        touch: () => Promise.resolve(),
        end: unsupported("sessions.end"),
        openIdsOfUser: () => Promise.resolve([]),
      },
      authRequests: {
        create: unsupported("authRequests.create"),
        findPending: () => Promise.resolve(undefined),
        update: unsupported("authRequests.update"),
        complete: unsupported("authRequests.complete"),
      },
      roles: { for: () => Promise.resolve([]), byApi: () => Promise.resolve({}) },
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
  }

  /** The Store the engine would hand the core. */
  get store(): Store {
    return {
      ...this.repositories(() => this.state),
      clients: { get: (id) => Promise.resolve(this.clients.get(id)) },
      apis: { list: () => Promise.resolve([]) },
      settings: { get: () => Promise.resolve(this.settings) },
      keys: {
        signing: () => Promise.resolve(this.signingKey),
        verification: () => Promise.resolve(createLocalJWKSet(this.jwks)),
        published: () => Promise.resolve({ body: JSON.stringify(this.jwks), etag: '"unit"' }),
      },
      // No cache: every resolution reads the state, so a test sees each write at once.
      activeTokens: { through: (_token, load) => load() },
      grantClaims: { userinfo: (grantId) => Promise.resolve(this.state.grants.get(grantId)?.claims?.userinfo ?? []) },
      rateLimits: { hit: (_key, limit, windowSeconds) => Promise.resolve({ allowed: true, count: 1, limit, retryAfterSeconds: windowSeconds }) },
      transaction: async (fn) => {
        this.transactions += 1;
        const draft = cloneState(this.state);
        const result = await fn(this.repositories(() => draft));
        this.state = draft;
        return result;
      },
    };
  }
}
