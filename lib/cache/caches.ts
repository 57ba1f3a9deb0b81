import type { JWTVerifyGetKey } from "jose";
import type { Client } from "@/lib/store/clients";
import type { Settings } from "@/lib/store/settings";
import { TtlCache } from "./ttl-cache";

/**
 * The engine's caches of what rarely changes and is read on every request. Each is short-lived
 * (the fallback when an invalidation is missed) and dropped by name after a change commits, on
 * this instance at once and on the others through the database (lib/cache/invalidation.ts).
 */
export type CacheName = "settings" | "clients" | "keys" | "textOverrides";

export type KeyMaterial = {
  jwks: { body: string; etag: string };
  keySet: JWTVerifyGetKey;
  active: { kid: string; alg: string; privateKey: CryptoKey };
  /** Publishable kids, for "reload before refusing an unknown kid". */
  kids: Set<string>;
};

export class Caches {
  readonly settings = new TtlCache<Settings>(3_000, 1);
  readonly clients = new TtlCache<Client | undefined>(3_000);
  readonly keys = new TtlCache<KeyMaterial>(5_000, 1);
  readonly textOverrides = new TtlCache<Record<string, string>>(3_000, 16);
  /** The discovery document by enabled features (the issuer is the engine's). */
  readonly discovery = new TtlCache<string>(Number.POSITIVE_INFINITY, 16);
  /**
   * Parsed key material by a key that changes whenever the material does (kid, or client id plus
   * registration version): parsing RSA keys is costly, and such an entry never goes stale.
   */
  readonly parsedKeys = new TtlCache<CryptoKey | Uint8Array>(Number.POSITIVE_INFINITY);
  readonly clientKeySets = new Map<string, { version: number; keys: JWTVerifyGetKey }>();

  private lastKeyReload = 0;

  /** Whether an unknown kid may trigger a reload of the keys now (at most once a second). */
  allowKeyReload(now = Date.now()): boolean {
    if (now - this.lastKeyReload < 1000) return false;
    this.lastKeyReload = now;
    return true;
  }

  invalidate(name: CacheName, key?: string): void {
    this[name].invalidate(key);
  }

  invalidateAll(): void {
    for (const name of ["settings", "clients", "keys", "textOverrides"] as const) this[name].invalidate();
  }
}
