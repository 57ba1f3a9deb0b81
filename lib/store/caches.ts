import type { JWTVerifyGetKey } from "jose";
import type { Api } from "@/lib/store/apis";
import type { Client, ClientOrigins } from "@/lib/store/clients";
import type { ActiveKey } from "@/lib/store/signing-keys";
import { MAX_AUTH_CODE_SECONDS, type Settings } from "@/lib/store/settings";
import type { TokenWithGrant } from "@/lib/store/tokens";
import type { Redemption } from "@/lib/store/codes";
import type { RememberedBrowser } from "@/lib/store/remembered-browsers";
import { TtlCache } from "@/lib/cache/ttl-cache";
import type { Clock } from "@/lib/clock";

/**
 * The engine's caches of what rarely changes and is read on every request. Each is short-lived
 * (the fallback when an invalidation is missed) and dropped by name after a change commits, on
 * this instance at once and on the others through the database (lib/store/invalidation.ts).
 */
export type CacheName = "settings" | "clients" | "keys" | "textOverrides" | "accessTokens" | "apis";

/**
 * How long an access token found active is answered from memory (introspection, userinfo). A
 * revocation drops every entry at once on its own instance and, through NOTIFY, on the others on
 * the same PostgreSQL; this bounds the staleness on another instance only when a notification is lost.
 */
export const ACCESS_TOKEN_CACHE_SECONDS = 5;

/** How long a refresh token's read is remembered for its own rotation (`issuedRefreshTokens`). */
const ISSUED_REFRESH_TOKEN_SECONDS = 3600;

export type KeyMaterial = {
  jwks: { body: string; etag: string };
  keySet: JWTVerifyGetKey;
  active: ActiveKey;
  /** Publishable kids, for "reload before refusing an unknown kid". */
  kids: Set<string>;
};

export class Caches {
  readonly settings: TtlCache<Settings>;
  readonly clients: TtlCache<Client | undefined>;
  /** Every client's web origin settings (a short list, read whole: CORS of errors, lib/oauth/cors.ts). */
  readonly clientOrigins: TtlCache<ClientOrigins[]>;
  readonly keys: TtlCache<KeyMaterial>;
  readonly textOverrides: TtlCache<Record<string, string>>;
  /** Every API resource (a short list, read whole: resource indicators, scopes, discovery). */
  readonly apis: TtlCache<Api[]>;
  /** Access tokens found active, by the SHA-256 of the token (what they grant, lib/oauth/access-token.ts). */
  readonly accessTokens: TtlCache<object | undefined>;
  /** The user claims a grant's authorization request asked for at userinfo, by grant id: a grant's never change. */
  readonly grantClaims: TtlCache<string[]>;
  /**
   * Refresh tokens this instance issued (a code's first, a rotation's successor), by the SHA-256
   * of the token, with what their own rotation would read (`Store.issuedRefreshTokens`). Taken once; a rotation
   * trusts one only together with its guard (lib/store/tokens.ts markRotatedWrite), so no change
   * elsewhere needs to invalidate it, and `invalidateAll` leaves it alone.
   */
  readonly issuedRefreshTokens: TtlCache<TokenWithGrant>;
  /**
   * Codes this instance issued, by the SHA-256 of the code, with what their redemption would read
   * (`Store.codeRedemptions`). Taken once, and trusted only together with the guard that marks the
   * code used (lib/store/codes.ts markCodeUsedWrite); `invalidateAll` leaves it alone too.
   */
  readonly codeRedemptions: TtlCache<Redemption>;
  /**
   * Browsers with their live sessions, by the SHA-256 of the cookie, on PGlite only: each is
   * trusted only while no statement that may change it has been sent since its read
   * (lib/store/remembered-browsers.ts), so it needs no invalidation by name.
   */
  readonly browsers: TtlCache<RememberedBrowser>;
  /** The discovery document by enabled features (the issuer is the engine's). */
  readonly discovery: TtlCache<string>;
  /**
   * Parsed key material by a key that changes whenever the material does (kid, or client id plus
   * registration version): parsing RSA keys is costly, and such an entry never goes stale.
   */
  readonly parsedKeys: TtlCache<CryptoKey | Uint8Array>;

  /** Entries expire by the engine's clock (lib/clock.ts). */
  constructor(private readonly clock: Clock) {
    this.settings = new TtlCache(clock, 3_000, 1);
    this.clients = new TtlCache(clock, 3_000);
    this.clientOrigins = new TtlCache(clock, 3_000, 1);
    this.keys = new TtlCache(clock, 5_000, 1);
    this.textOverrides = new TtlCache(clock, 3_000, 16);
    this.apis = new TtlCache(clock, 3_000, 1);
    this.accessTokens = new TtlCache(clock, ACCESS_TOKEN_CACHE_SECONDS * 1000, 50_000);
    this.grantClaims = new TtlCache(clock, 60_000, 50_000);
    // An hour covers a client that refreshes when its access token (an hour by default) runs
    // out; 10,000 entries of a few kB each bound the memory.
    this.issuedRefreshTokens = new TtlCache(clock, ISSUED_REFRESH_TOKEN_SECONDS * 1000, 10_000);
    // The longest code lifetime the settings allow; a code past its own is refused by the grant
    // and by the guard whatever is remembered.
    this.codeRedemptions = new TtlCache(clock, MAX_AUTH_CODE_SECONDS * 1000, 10_000);
    // A minute bounds how long a browser nobody writes to stays in memory; 5,000 entries of a
    // few kB each (sessions and whole users) bound the memory.
    this.browsers = new TtlCache(clock, 60_000, 5_000);
    this.discovery = new TtlCache(clock, Number.POSITIVE_INFINITY, 16);
    this.parsedKeys = new TtlCache(clock, Number.POSITIVE_INFINITY);
  }

  readonly clientKeySets = new Map<string, { version: number; keys: JWTVerifyGetKey }>();

  private lastKeyReload = 0;

  /** Whether an unknown kid may trigger a reload of the keys now (at most once a second). */
  allowKeyReload(now = this.clock.now()): boolean {
    if (now - this.lastKeyReload < 1000) return false;
    this.lastKeyReload = now;
    return true;
  }

  invalidate(name: CacheName, key?: string): void {
    this[name].invalidate(key);
    // Discovery lists every API's scopes in scopes_supported.
    if (name === "apis") this.discovery.invalidate();
    // Any client's change may change the origins of all of them.
    if (name === "clients") this.clientOrigins.invalidate();
  }

  invalidateAll(): void {
    for (const name of ["settings", "clients", "keys", "textOverrides", "accessTokens", "apis"] as const) this.invalidate(name);
  }
}
