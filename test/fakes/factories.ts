import { createLocalJWKSet, type JWTVerifyGetKey } from "jose";
import { expect } from "vitest";
import { sha256 } from "@/lib/crypto";
import type { Engine } from "@/lib/engine";
import { createLogger } from "@/lib/log";
import { OAuthError } from "@/lib/protocol/errors";
import { GRANTS } from "@/lib/oauth/token-endpoint";
import type { TokenResponse } from "@/lib/oauth/grants/types";
import { Caches } from "@/lib/store/caches";
import type { Api } from "@/lib/store/apis";
import type { Client } from "@/lib/store/clients";
import { defaultSettings, type Settings } from "@/lib/store/settings";
import type { User } from "@/lib/store/users";
import { MemoryStore } from "./memory-store";

/** Shared fixtures of the protocol core's unit tests (against the MemoryStore: no database, no HTTP). */

export const ISSUER = "https://idp.unit";
export const REDIRECT = "https://rp.unit/cb";

export function unitSettings(o: Partial<Settings> = {}): Settings {
  return { ...defaultSettings(ISSUER, "unit"), updatedAt: new Date(), ...o } as Settings;
}

export function makeClient(o: Partial<Client> = {}): Client {
  const now = new Date();
  return {
    id: "unit-client",
    name: "unit",
    redirectUris: [REDIRECT],
    postLogoutRedirectUris: [],
    responseTypes: ["code"],
    grantTypes: ["authorization_code", "refresh_token", "client_credentials"],
    authMethod: "client_secret_basic",
    jwks: null,
    allowedOrigins: null,
    firstParty: true,
    apiScopes: {},
    accessTokenType: "jwt",
    idTokenUserinfoAssertion: false,
    accessTokenLifetime: 900,
    idTokenLifetime: 600,
    refreshTokenLifetime: 86_400,
    secretHash: null,
    createdAt: now,
    updatedAt: now,
    ...o,
  };
}

/** A confidential client with `secret` (stored as its SHA-256, as the management API does). */
export function secretClient(id: string, secret: string, o: Partial<Client> = {}): Client {
  return makeClient({ id, secretHash: sha256(secret), ...o });
}

export function makeUser(o: Partial<User> = {}): User {
  const now = new Date();
  return {
    id: "unit-user",
    type: "human",
    username: "jane",
    email: "jane@example.com",
    emailVerified: true,
    givenName: "Jane",
    familyName: "Doe",
    nickname: null,
    name: null,
    description: null,
    locale: null,
    phone: null,
    phoneVerified: false,
    address: null,
    roles: [],
    locked: false,
    passwordChangeRequiredSince: null,
    createdAt: now,
    updatedAt: now,
    ...o,
  };
}

export function makeApi(o: Partial<Api> = {}): Api {
  const now = new Date();
  return {
    id: "api-1",
    identifier: "https://api.unit/",
    name: "Unit API",
    scopes: [{ name: "read", description: "Read" }],
    roles: [],
    accessTokenType: "jwt",
    accessTokenLifetime: 300,
    secretHash: null,
    jwks: null,
    createdAt: now,
    updatedAt: now,
    ...o,
  };
}

/** Runs a grant of the token endpoint directly (after client authentication), as grants-unit does. */
export function runGrant(m: MemoryStore, type: string, form: Record<string, string>, client: Client | null, settings: Settings = m.settings): Promise<TokenResponse> {
  return GRANTS[type]!.handle({
    request: new Request(`${ISSUER}/oauth/v2/token`, { method: "POST" }),
    form: new Map(Object.entries({ grant_type: type, ...form })),
    store: m.store,
    masterKey: Buffer.alloc(32, 7),
    issuer: ISSUER,
    caches: new Caches(m.clock),
    log: createLogger("silent"),
    settings,
    client,
    audit: { type: "client", id: client?.id ?? null },
  });
}

/** The OAuth error code a promise rejects with (fails the test if it resolves or throws anything else). */
export async function refused(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OAuthError);
  return (err as OAuthError).error;
}

/**
 * The engine the handlers of lib/oauth take, built on the MemoryStore: its store, clock, key and
 * settings. No database: `db` throws on use (the authorization endpoint's text overrides then fall
 * back to the catalogs, as they do when the database cannot answer).
 */
export function memoryEngine(m: MemoryStore): Engine {
  const noDb = new Proxy(
    {},
    {
      get() {
        throw new Error("memory engine: no database");
      },
    },
  );
  return {
    id: "unit-engine",
    config: { issuer: ISSUER, logLevel: "silent" },
    issuer: ISSUER,
    db: noDb,
    store: m.store,
    masterKey: Buffer.alloc(32, 7),
    clock: m.clock,
    log: createLogger("silent"),
    caches: new Caches(m.clock),
  } as unknown as Engine;
}

/**
 * What the endpoint unit tests start from: a memory store with default settings, its engine, one
 * relying party with a client secret ("rp") and one user, both stored.
 */
export async function unitWorld(o: { secret?: string; user?: Partial<User> } = {}): Promise<{ m: MemoryStore; engine: Engine; rp: Client; user: User }> {
  const m = await MemoryStore.create(unitSettings());
  const rp = secretClient("rp", o.secret ?? "rp-secret");
  m.clients.set(rp.id, rp);
  const user = makeUser(o.user);
  m.users.set(user.id, user);
  return { m, engine: memoryEngine(m), rp, user };
}

/** Our published keys, to verify what the store's key signed. */
export function publishedKeys(m: MemoryStore): JWTVerifyGetKey {
  return createLocalJWKSet(m.jwks);
}

/** HTTP Basic credentials as RFC 6749 2.3.1 builds them (each part form-urlencoded). */
export function basicAuth(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
}

/** A form POST to one of our endpoints, as a client sends it. */
export function formPost(path: string, params: Record<string, string>, headers: Record<string, string> = {}): Request {
  return new Request(ISSUER + path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(params).toString(),
  });
}

/** An authorization code as the authorization endpoint would have stored it (its grant too). */
export async function seedCode(
  m: MemoryStore,
  o: { client: Client; user: User; scopes?: string[]; codeChallenge?: string | null; redirectUri?: string; sessionId?: string | null },
): Promise<string> {
  const scopes = o.scopes ?? ["openid", "offline_access"];
  const sessionId = o.sessionId ?? null;
  const { id } = await m.store.grants.create({ clientId: o.client.id, userId: o.user.id, sessionId, grantType: "authorization_code", scopes, expiresAt: new Date(m.clock.now() + 3_600_000) });
  const { code } = await m.store.codes.create({
    grantId: id,
    clientId: o.client.id,
    userId: o.user.id,
    sessionId,
    redirectUri: o.redirectUri ?? REDIRECT,
    scopes,
    nonce: "n-1",
    codeChallenge: o.codeChallenge ?? null,
    codeChallengeMethod: o.codeChallenge ? "S256" : null,
    authTime: new Date(m.clock.now()),
    amr: ["pwd"],
    lifetimeSeconds: 60,
  });
  return code;
}
