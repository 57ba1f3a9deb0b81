import { createHash } from "node:crypto";
import { createLocalJWKSet, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK, type JWTVerifyGetKey } from "jose";
import type { Caches, KeyMaterial } from "@/lib/store/caches";
import { mutate, type MutationScope } from "@/lib/store/invalidation";
import { dateOf, type Clock } from "@/lib/clock";
import type { Executor } from "@/lib/db/client";
import { decrypt, encrypt, randomToken } from "@/lib/crypto";
import { keyObjectOf } from "./jws";
import { recordAudit, SYSTEM, type Actor } from "@/lib/store/audit";
import { longestTokenLifetime } from "@/lib/store/lifetimes";
import {
  activeSigningKeys,
  allSigningKeys,
  deleteRemovableKeys,
  insertSigningKey,
  lockRotation,
  retireActiveKeys,
  type ActiveKey,
  type SigningKeyRow,
} from "@/lib/store/signing-keys";

export type { ActiveKey };

export const SIGNING_ALG = "RS256";
/** Tolerance for clock skew between us and relying parties when retiring keys. */
const SKEW_SECONDS = 300;

export type SigningKeyInfo = {
  kid: string;
  alg: string;
  status: "next" | "active" | "retired";
  createdAt: Date;
  retiredAt: Date | null;
  removeAfter: Date | null;
};


async function newKeyRow(masterKey: Buffer) {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { modulusLength: 2048, extractable: true });
  const kid = randomToken(16);
  const pub = await exportJWK(publicKey);
  const priv = await exportJWK(privateKey);
  return {
    kid,
    alg: SIGNING_ALG,
    publicJwk: { kty: pub.kty, kid, use: "sig", alg: SIGNING_ALG, n: pub.n, e: pub.e },
    // The kid is the additional authenticated data: a ciphertext cannot be moved to another row.
    privateJwkEncrypted: encrypt(masterKey, JSON.stringify(priv), `signing-key:${kid}`),
    status: "active" as const,
  };
}

/** Creates the first signing key; used by bootstrap inside its transaction. */
export async function createInitialSigningKey(db: Executor, masterKey: Buffer): Promise<string> {
  const row = await newKeyRow(masterKey);
  await insertSigningKey(db, row);
  return row.kid;
}

export type RotationResult = { rotated: boolean; kid: string; removed: string[] };

/**
 * Publishes a new signing key and retires the previous one. The new key is in the key set at once
 * but signs only after `publishDelaySeconds` (the key set's `max-age`, IDP_JWKS_MAX_AGE): a relying
 * party that cached the key set a moment before the rotation must know the key before it sees a
 * token signed with it. Until then the previous key goes on signing (its `retiredAt` lies that
 * far ahead); it stays published until every token it signed has expired. Without `force`,
 * rotates only when the active key is older than `intervalSeconds`; the lock and that re-check
 * inside it make concurrent calls from several instances rotate once.
 */
export async function rotateSigningKey(
  scope: KeyScope & MutationScope,
  opts: { force: boolean; intervalSeconds: number; publishDelaySeconds?: number; actor?: Actor; now?: Date },
): Promise<RotationResult> {
  const now = opts.now ?? dateOf(scope.clock);
  const fresh = await newKeyRow(scope.masterKey); // RSA generation is slow: keep it outside the lock.
  return mutate(scope, [{ cache: "keys" }], async (tx) => {
    await lockRotation(tx);
    const active = await activeSigningKeys(tx);
    const newest = active[active.length - 1];
    const due = !newest || now.getTime() - newest.createdAt.getTime() >= opts.intervalSeconds * 1000;
    let rotated = false;
    let kid = newest?.kid ?? "";
    if (opts.force || due) {
      const lifetime = await longestTokenLifetime(tx);
      const signsFrom = new Date(now.getTime() + (opts.publishDelaySeconds ?? 0) * 1000);
      const removeAfter = new Date(signsFrom.getTime() + (lifetime + SKEW_SECONDS) * 1000);
      if (active.length) await retireActiveKeys(tx, signsFrom, removeAfter);
      await insertSigningKey(tx, { ...fresh, createdAt: now });
      rotated = true;
      kid = fresh.kid;
      await recordAudit(tx, opts.actor ?? SYSTEM, {
        action: "signing_key.rotated",
        targetType: "signing_key",
        targetId: fresh.kid,
        details: { retired: active.map((k) => k.kid), signsFrom: signsFrom.toISOString(), reason: opts.force ? "on_demand" : "scheduled" },
      });
    }
    const removed = await deleteExpiredKeys(tx, now);
    return { rotated, kid, removed };
  });
}

/** Drops retired keys whose tokens have all expired; they leave the published key set everywhere. */
export function removeExpiredKeys(scope: MutationScope, now: Date): Promise<string[]> {
  return mutate(scope, (removed) => (removed.length ? [{ cache: "keys" }] : []), (tx) => deleteExpiredKeys(tx, now));
}

async function deleteExpiredKeys(db: Executor, now: Date): Promise<string[]> {
  const removed = await deleteRemovableKeys(db, now);
  if (removed.length) {
    await recordAudit(db, SYSTEM, { action: "signing_key.removed", targetType: "signing_key", details: { kids: removed } });
  }
  return removed;
}

type KeyRow = SigningKeyRow;

/**
 * The key that signs at `now`: a retired key whose `retiredAt` is still ahead goes on signing
 * while its successor is being published (the earliest such, after quick successive rotations);
 * otherwise the newest active key.
 */
function signerOf<R extends Pick<KeyRow, "status" | "retiredAt" | "createdAt">>(rows: readonly R[], now: Date): R | undefined {
  // Retired with a publish delay: its successor was created before its retiredAt.
  const handingOver = (r: R) => rows.some((k) => k.createdAt > r.createdAt && k.createdAt < r.retiredAt!);
  const stillSigning = rows
    .filter((r) => r.status === "retired" && r.retiredAt && r.retiredAt > now && handingOver(r))
    .sort((a, b) => a.retiredAt!.getTime() - b.retiredAt!.getTime());
  return stillSigning[0] ?? rows.filter((r) => r.status === "active").pop();
}

/** Oldest first; `next` is a published key that does not sign yet, `active` the one that signs. */
export async function listSigningKeys(db: Executor, now: Date): Promise<SigningKeyInfo[]> {
  const rows = await allSigningKeys(db);
  const signer = signerOf(rows, now);
  return rows.map((r) => ({
    kid: r.kid,
    alg: r.alg,
    status: r === signer ? "active" : r.status === "active" ? "next" : "retired",
    createdAt: r.createdAt,
    retiredAt: r.retiredAt,
    removeAfter: r.removeAfter,
  }));
}

// ---- the engine's key cache: keys change rarely, and every token request needs them ----

/** What reading keys needs: the database, the master key (to decrypt the signing key) and the caches. */
export type KeyScope = { db: Executor; masterKey: Buffer; caches: Caches; clock: Clock };

function keyMaterial(scope: KeyScope): Promise<KeyMaterial> {
  return scope.caches.keys.get("keys", async () => {
    const rows = await allSigningKeys(scope.db);
    const body = JSON.stringify({ keys: rows.map((r) => r.publicJwk) });
    const active = signerOf(rows, dateOf(scope.clock));
    if (!active) throw new Error("no active signing key");
    // A kid's key never changes, so its parsed form is kept across reloads.
    const privateKey = (await scope.caches.parsedKeys.get(`signing:${active.kid}`, () => {
      const jwk = JSON.parse(decrypt(scope.masterKey, active.privateJwkEncrypted, `signing-key:${active.kid}`)) as JWK;
      return importJWK(jwk, active.alg);
    })) as CryptoKey;
    return {
      jwks: { body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` },
      keySet: createLocalJWKSet(JSON.parse(body) as { keys: JWK[] }),
      active: { kid: active.kid, alg: active.alg, privateKey, signer: keyObjectOf(privateKey) },
      kids: new Set(rows.map((r) => r.kid)),
    };
  });
}

/** The key set as served at /oauth/v2/keys, with its entity tag. */
export async function publicJwks(scope: KeyScope): Promise<{ body: string; etag: string }> {
  return (await keyMaterial(scope)).jwks;
}

/**
 * Our published keys as a jose key set for verifying what we signed. A `kid` this instance does
 * not know yet may come from a key another instance has just created: the keys are read again
 * (at most once a second, so that made-up kids cannot turn every request into a query) before
 * the token is refused.
 */
export async function publicKeySet(scope: KeyScope): Promise<JWTVerifyGetKey> {
  const first = await keyMaterial(scope);
  return async (header, token) => {
    let m = first;
    if (header.kid && !m.kids.has(header.kid) && scope.caches.allowKeyReload()) {
      scope.caches.keys.invalidate();
      m = await keyMaterial(scope);
    }
    return m.keySet(header, token);
  };
}

/** The active key of each cached key material, made once (see activeSigningKey). */
const activeOfMaterial = new WeakMap<Promise<KeyMaterial>, Promise<ActiveKey>>();

/**
 * The key tokens are signed with. Every grant asks for it; the answer is one promise per cached
 * key material, not a new one per call: with Next's async context storage on, each promise
 * the process makes runs hooks (docs/architecture.md, "Promises on the hot path").
 */
export function activeSigningKey(scope: KeyScope): Promise<ActiveKey> {
  const material = keyMaterial(scope);
  let active = activeOfMaterial.get(material);
  if (!active) activeOfMaterial.set(material, (active = material.then((m) => m.active)));
  return active;
}
