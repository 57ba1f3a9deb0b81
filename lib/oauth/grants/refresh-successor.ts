import { createHmac } from "node:crypto";
import { hmac } from "@/lib/crypto";

/**
 * The successor of a refresh token: HMAC-SHA256 of the presented token under a key derived from
 * the instance master key, instead of fresh random bits.
 *
 * Why derived: tokens are stored only as SHA-256 hashes, so a client that presents its rotated
 * token again within the reuse interval could not otherwise be given the same successor, short of
 * keeping the successor itself (even encrypted) in the database. Derived, nothing is kept and
 * nothing needs forgetting: recomputing a successor takes both the presented token (which the
 * database never holds) and the master key (which it never holds either), so a database dump
 * yields no token; the value is as unpredictable as a random one (256 bits) to anyone without
 * both. Presenting the rotated token within the interval is exactly the case the interval exists
 * for; outside it, the repeat is reuse and revokes the family as before. The access and ID tokens
 * of a repeated answer are issued fresh (they are not stored either); only the refresh token is
 * the same, so both of a client's tabs continue with one family.
 */
export function successorValue(masterKey: Buffer, presented: string): string {
  return hmac(successorKey(masterKey), presented);
}

/** The successor key of each master key, derived once: every refresh needs it. */
const successorKeys = new WeakMap<Buffer, Buffer>();

function successorKey(masterKey: Buffer): Buffer {
  let key = successorKeys.get(masterKey);
  if (!key) {
    key = createHmac("sha256", masterKey).update("torii/refresh-token-successor/v1").digest();
    successorKeys.set(masterKey, key);
  }
  return key;
}

/**
 * Seconds after a rotation during which the rotated refresh token may be presented again and get
 * the same successor (Okta's grace period, Auth0's reuse interval). 0, the default, is strict
 * reuse detection. Kept in the `lifetimes` settings, where instances set up before it existed
 * have no value.
 */
export function refreshReuseIntervalSeconds(settings: { lifetimes: { refreshTokenReuseInterval?: number | null } }): number {
  return settings.lifetimes.refreshTokenReuseInterval ?? 0;
}
