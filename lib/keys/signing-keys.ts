import { createHash } from "node:crypto";
import { and, asc, eq, lt, sql } from "drizzle-orm";
import { createLocalJWKSet, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK, type JWTVerifyGetKey } from "jose";
import { signingKeys } from "@/db/schema";
import type { Db, Executor } from "@/lib/db/client";
import { decrypt, encrypt, randomToken } from "@/lib/crypto";
import { recordAudit, SYSTEM, type Actor } from "@/lib/store/audit";
import { longestTokenLifetime } from "@/lib/store/lifetimes";

export const SIGNING_ALG = "RS256";
/** Advisory lock shared by all instances so that one rotation happens, not one per instance. */
const ROTATION_LOCK = 72_690_002;
/** Tolerance for clock skew between us and relying parties when retiring keys. */
const SKEW_SECONDS = 300;

export type SigningKeyInfo = {
  kid: string;
  alg: string;
  status: "active" | "retired";
  createdAt: Date;
  retiredAt: Date | null;
  removeAfter: Date | null;
};

export type ActiveKey = { kid: string; alg: string; privateKey: CryptoKey };

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
  await db.insert(signingKeys).values(row);
  return row.kid;
}

export type RotationResult = { rotated: boolean; kid: string; removed: string[] };

/**
 * Makes a new key the signing key and retires the previous one, which stays in the key set until
 * every token it signed has expired. Without `force`, rotates only when the active key is older
 * than `intervalSeconds`; the lock and that re-check inside it make concurrent calls from several
 * instances rotate once.
 */
export async function rotateSigningKey(
  db: Db,
  masterKey: Buffer,
  opts: { force: boolean; intervalSeconds: number; actor?: Actor; now?: Date },
): Promise<RotationResult> {
  const now = opts.now ?? new Date();
  const fresh = await newKeyRow(masterKey); // RSA generation is slow: keep it outside the lock.
  const result = await db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${ROTATION_LOCK})`);
    const active = await tx
      .select()
      .from(signingKeys)
      .where(eq(signingKeys.status, "active"))
      .orderBy(asc(signingKeys.createdAt));
    const newest = active[active.length - 1];
    const due = !newest || now.getTime() - newest.createdAt.getTime() >= opts.intervalSeconds * 1000;
    let rotated = false;
    let kid = newest?.kid ?? "";
    if (opts.force || due) {
      const lifetime = await longestTokenLifetime(tx);
      const removeAfter = new Date(now.getTime() + (lifetime + SKEW_SECONDS) * 1000);
      if (active.length) {
        await tx
          .update(signingKeys)
          .set({ status: "retired", retiredAt: now, removeAfter })
          .where(eq(signingKeys.status, "active"));
      }
      await tx.insert(signingKeys).values({ ...fresh, createdAt: now });
      rotated = true;
      kid = fresh.kid;
      await recordAudit(tx, opts.actor ?? SYSTEM, {
        action: "signing_key.rotated",
        targetType: "signing_key",
        targetId: fresh.kid,
        details: { retired: active.map((k) => k.kid), reason: opts.force ? "on_demand" : "scheduled" },
      });
    }
    const removed = await removeExpiredKeys(tx, now);
    return { rotated, kid, removed };
  });
  invalidateKeyCache();
  return result;
}

/** Drops retired keys whose tokens have all expired; they leave the published key set. */
export async function removeExpiredKeys(db: Executor, now = new Date()): Promise<string[]> {
  const removed = await db
    .delete(signingKeys)
    .where(and(eq(signingKeys.status, "retired"), lt(signingKeys.removeAfter, now)))
    .returning({ kid: signingKeys.kid });
  if (removed.length) {
    await recordAudit(db, SYSTEM, {
      action: "signing_key.removed",
      targetType: "signing_key",
      details: { kids: removed.map((r) => r.kid) },
    });
    invalidateKeyCache();
  }
  return removed.map((r) => r.kid);
}

export async function listSigningKeys(db: Executor): Promise<SigningKeyInfo[]> {
  const rows = await db.select().from(signingKeys).orderBy(asc(signingKeys.createdAt));
  return rows.map((r) => ({
    kid: r.kid,
    alg: r.alg,
    status: r.status,
    createdAt: r.createdAt,
    retiredAt: r.retiredAt,
    removeAfter: r.removeAfter,
  }));
}

// ---- per-process caches: keys change rarely, and every token request needs them ----

/** Short enough that a rotation by another instance is seen within seconds. */
const TTL_MS = 5000;
const CACHE = Symbol.for("torii.keys.cache");
type KeyCache = {
  at: number;
  jwks: Promise<{ body: string; etag: string }>;
  active: Promise<ActiveKey>;
  /** Parsed private keys by kid: RSA parsing is costly, and a kid's key never changes. */
  parsed: Map<string, Promise<CryptoKey>>;
};
type G = typeof globalThis & { [CACHE]?: KeyCache };

export function invalidateKeyCache(): void {
  const g = globalThis as G;
  if (g[CACHE]) g[CACHE].at = 0;
}

function cache(db: Executor, masterKey: Buffer): KeyCache {
  const g = globalThis as G;
  const current = g[CACHE];
  if (current && Date.now() - current.at < TTL_MS) return current;
  const parsed = current?.parsed ?? new Map<string, Promise<CryptoKey>>();
  const rows = db.select().from(signingKeys).orderBy(asc(signingKeys.createdAt));
  const next: KeyCache = {
    at: Date.now(),
    parsed,
    jwks: rows.then((rs) => {
      const body = JSON.stringify({ keys: rs.map((r) => r.publicJwk) });
      return { body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` };
    }),
    active: rows.then(async (rs) => {
      const active = rs.filter((r) => r.status === "active").pop();
      if (!active) throw new Error("no active signing key");
      let key = parsed.get(active.kid);
      if (!key) {
        const jwk = JSON.parse(decrypt(masterKey, active.privateJwkEncrypted, `signing-key:${active.kid}`)) as JWK;
        key = importJWK(jwk, active.alg) as Promise<CryptoKey>;
        parsed.set(active.kid, key);
      }
      return { kid: active.kid, alg: active.alg, privateKey: await key };
    }),
  };
  // A failed read must not be cached.
  next.jwks.catch(() => invalidateKeyCache());
  next.active.catch(() => invalidateKeyCache());
  g[CACHE] = next;
  return next;
}

/** The key set as served at /oauth/v2/keys, with its entity tag. */
export function publicJwks(db: Executor, masterKey: Buffer): Promise<{ body: string; etag: string }> {
  return cache(db, masterKey).jwks;
}

const KEY_SET = Symbol.for("torii.publicKeySet");
type KeySetGlobal = typeof globalThis & { [KEY_SET]?: { etag: string; keys: JWTVerifyGetKey } };

/** Our published keys as a jose key set for verifying what we signed, parsed once per key-set version. */
export async function publicKeySet(db: Executor, masterKey: Buffer): Promise<JWTVerifyGetKey> {
  const { body, etag } = await publicJwks(db, masterKey);
  const g = globalThis as KeySetGlobal;
  if (g[KEY_SET]?.etag !== etag) g[KEY_SET] = { etag, keys: createLocalJWKSet(JSON.parse(body)) };
  return g[KEY_SET]!.keys;
}

export function activeSigningKey(db: Executor, masterKey: Buffer): Promise<ActiveKey> {
  return cache(db, masterKey).active;
}
