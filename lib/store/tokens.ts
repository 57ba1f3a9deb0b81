import { and, inArray, eq, isNull, or, sql } from "drizzle-orm";
import { grants, refreshTokenFamilies, tokenRevocations, tokens, users } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { randomToken, sha256 } from "@/lib/crypto";
import type { Grant } from "./grants";
import type { User } from "./users";
import { notRevoked, userAsRead } from "./guard-checks";
import { columnsOf, insertRow, preparedRead, statement } from "./statement";
import { runGuard, runWrite, type GuardWrite, type Write } from "./write";

export type StoredToken = typeof tokens.$inferSelect;
export type RefreshFamily = typeof refreshTokenFamilies.$inferSelect;

export { revokeFamily, revokeGrant, revokeJti, revokeSessionTokens } from "./grants";

/**
 * A refresh token to store. Access tokens are never stored (a JWT is signed, an opaque one sealed:
 * lib/oauth/tokens.ts); rows of kind `access` are left only by earlier versions, and nothing reads them.
 */
export type NewStoredToken = {
  kind: "refresh";
  clientId: string;
  userId: string | null;
  sessionId: string | null;
  grantId: string;
  familyId?: string | null;
  scopes: string[];
  audience: string[];
  actor?: Record<string, unknown> | null;
  expiresAt: Date;
};

/**
 * Stores a refresh token by the SHA-256 of its value; returns the value (shown once) and the row
 * id. The value is 256 random bits unless the caller derived one of the same strength.
 */
export function insertOpaqueTokenWrite(db: Executor, t: NewStoredToken & { value?: string }): Write<{ value: string; id: string }> {
  const { value = randomToken(32), ...row } = t;
  const id = randomToken(16);
  return { query: insertRow(db, tokens, { id, tokenHash: sha256(value), familyId: null, actor: null, ...row }), result: { value, id } };
}

export function insertOpaqueToken(db: Executor, t: NewStoredToken & { value?: string }): Promise<{ value: string; id: string }> {
  return runWrite(insertOpaqueTokenWrite(db, t));
}

/** The stored token with this value, whatever its state; callers decide what revoked/expired/rotated mean. */
export async function findTokenByValue(db: Executor, value: string): Promise<StoredToken | undefined> {
  const [t] = await db.select().from(tokens).where(eq(tokens.tokenHash, sha256(value)));
  return t;
}

/**
 * What the refresh grant checks and carries over (lib/oauth/grants/refresh-token.ts): of the
 * token, its family and its grant only these columns are read (`columnsOf`). Through the store on
 * PGlite, the four whole rows took 128 µs of CPU a read (eight at a time) and these 105.
 */
const REFRESH_TOKEN_COLUMNS = ["id", "kind", "clientId", "userId", "grantId", "familyId", "audience", "expiresAt", "revokedAt", "rotatedAt"] as const;
const REFRESH_FAMILY_COLUMNS = ["id", "sessionId", "scopes", "authTime", "amr", "actor", "notAfter", "revokedAt", "lastRefreshIp"] as const;
const REFRESH_GRANT_COLUMNS = ["id", "claims", "resources", "revokedAt"] as const;

export type RefreshToken = Pick<StoredToken, (typeof REFRESH_TOKEN_COLUMNS)[number]>;
export type RefreshTokenFamily = Pick<RefreshFamily, (typeof REFRESH_FAMILY_COLUMNS)[number]>;
export type RefreshTokenGrant = Pick<Grant, (typeof REFRESH_GRANT_COLUMNS)[number]>;

/** A stored token with its refresh family, grant and user (each undefined when it has none, or it is gone). */
export type TokenWithGrant = { token: RefreshToken; family: RefreshTokenFamily | undefined; grant: RefreshTokenGrant | undefined; user: User | undefined };

/** The token with this value and what the refresh grant checks with it, in one query. */
export async function findTokenWithGrant(db: Executor, value: string): Promise<TokenWithGrant | undefined> {
  const [row] = await preparedRead(db, "tokens.findWithGrant", (p, name) =>
    db
      .select({
        token: columnsOf(tokens, REFRESH_TOKEN_COLUMNS),
        family: columnsOf(refreshTokenFamilies, REFRESH_FAMILY_COLUMNS),
        grant: columnsOf(grants, REFRESH_GRANT_COLUMNS),
        user: users,
      })
      .from(tokens)
      .leftJoin(refreshTokenFamilies, eq(refreshTokenFamilies.id, tokens.familyId))
      .leftJoin(grants, eq(grants.id, tokens.grantId))
      .leftJoin(users, eq(users.id, tokens.userId))
      .where(eq(tokens.tokenHash, p("hash")))
      .prepare(name),
  ).execute({ hash: sha256(value) });
  return row && { token: row.token, family: row.family ?? undefined, grant: row.grant ?? undefined, user: row.user ?? undefined };
}

/** What a rotation checks the database still says of the token it read (`TokenWithGrant`). */
export type Rotation = {
  id: string;
  /** The presented value: its hash must still be this row's, so a remembered id can never rotate another token. */
  value: string;
  /**
   * For a read answered from memory, the user's `updatedAt` as it was read: a change since then
   * loses the guard. Null for a read just made (its user is as current as the read) and for a
   * client's own token. A read just made must not lose to a profile change that commits between
   * it and the guard: a guard that loses in a transaction is taken for reuse (the family revoked).
   */
  userVersion: Date | null;
};

/**
 * Marks a refresh token as exchanged for its successor, and only if everything the refresh grant
 * checked when it read the token still holds when the write commits: the token neither rotated,
 * revoked nor expired, its family and grant not revoked, its user neither locked, deleted nor
 * changed since a read from memory (`updated_at` as read, to the millisecond, which is what a
 * JavaScript Date keeps).
 *
 * Why all of it here and not only "not rotated": the read may be from memory (the successor this
 * instance issued, `Store.issuedRefreshTokens`), and on PostgreSQL another instance may have revoked
 * the grant since. With the checks in the guard, a revocation or a profile change that commits
 * before the rotation makes the guard lose, and the grant runs again in a transaction on a fresh
 * read (lib/store/write.ts); what was read can never outlive what the database says.
 * Exactly one concurrent caller wins; the others see `false`.
 */
export function markRotatedWrite(db: Executor, r: Rotation, now: Date): GuardWrite {
  return {
    guard: statement(
      db,
      "tokens.markRotated",
      (p) =>
        db
          .update(tokens)
          .set({ rotatedAt: sql`${p("now")}::timestamptz` })
          .where(
            and(
              eq(tokens.id, p("id")),
              eq(tokens.tokenHash, p("hash")),
              isNull(tokens.rotatedAt),
              isNull(tokens.revokedAt),
              sql`${tokens.expiresAt} > ${p("now")}::timestamptz`,
              notRevoked(refreshTokenFamilies, tokens.familyId),
              notRevoked(grants, tokens.grantId),
              // A client's own token has no user.
              sql`COALESCE(${userAsRead(tokens.userId, p("userVersion"))}, ${tokens.userId} IS NULL)`,
            ),
          )
          .returning({ id: tokens.id }),
      { now: now.toISOString(), id: r.id, hash: sha256(r.value), userVersion: r.userVersion?.toISOString() ?? null },
    ),
  };
}

export function markRotated(db: Executor, r: Rotation, now: Date): Promise<boolean> {
  return runGuard(markRotatedWrite(db, r, now));
}

export type NewFamily = {
  grantId: string;
  clientId: string;
  userId: string | null;
  sessionId: string | null;
  scopes: string[];
  authTime: Date | null;
  amr: string[];
  actor?: Record<string, unknown> | null;
  expiresAt: Date;
};

export function createRefreshFamilyWrite(db: Executor, f: NewFamily): Write<{ id: string }> {
  const id = randomToken(16);
  return { query: insertRow(db, refreshTokenFamilies, { id, actor: null, ...f }), result: { id } };
}

export function createRefreshFamily(db: Executor, f: NewFamily): Promise<{ id: string }> {
  return runWrite(createRefreshFamilyWrite(db, f));
}

/** Records the client address a family was refreshed from (`lastRefreshIp`). */
export function noteFamilyRefreshIpWrite(db: Executor, familyId: string, ip: string | null): Write<void> {
  return {
    query: statement(db, "tokens.noteFamilyRefreshIp", (p) => db.update(refreshTokenFamilies).set({ lastRefreshIp: sql`${p("ip")}::text` }).where(eq(refreshTokenFamilies.id, p("id"))), {
      ip,
      id: familyId,
    }),
    result: undefined,
  };
}

export function noteFamilyRefreshIp(db: Executor, familyId: string, ip: string | null): Promise<void> {
  return runWrite(noteFamilyRefreshIpWrite(db, familyId, ip));
}

export async function getRefreshFamily(db: Executor, id: string): Promise<RefreshFamily | undefined> {
  const [f] = await db.select().from(refreshTokenFamilies).where(eq(refreshTokenFamilies.id, id));
  return f;
}

/**
 * Whether a JWT access token (or ID token) has been revoked: by its `jti`, its grant (code replay,
 * refresh reuse, refresh-token revocation) or its session (logout). A revocation covers tokens
 * issued up to the moment it was recorded, so a session's offline access may keep issuing new ones.
 */
export async function isAccessTokenRevoked(
  db: Executor,
  t: { jti?: string | null; grantId?: string | null; sessionId?: string | null; iat?: number | null; audience?: readonly string[] },
): Promise<boolean> {
  const conds = [];
  if (t.audience?.length) conds.push(and(eq(tokenRevocations.subjectType, "audience"), inArray(tokenRevocations.subjectId, [...t.audience])));
  if (t.jti) conds.push(and(eq(tokenRevocations.subjectType, "jti"), eq(tokenRevocations.subjectId, t.jti)));
  if (t.grantId) conds.push(and(eq(tokenRevocations.subjectType, "grant"), eq(tokenRevocations.subjectId, t.grantId)));
  if (t.sessionId) conds.push(and(eq(tokenRevocations.subjectType, "session"), eq(tokenRevocations.subjectId, t.sessionId)));
  if (!conds.length) return false;
  const rows = await db
    .select({ type: tokenRevocations.subjectType, at: tokenRevocations.createdAt })
    .from(tokenRevocations)
    .where(or(...conds));
  // A jti revocation is always total; grant and session revocations cover what was issued before them.
  return rows.some((r) => r.type === "jti" || t.iat == null || t.iat <= Math.floor(r.at.getTime() / 1000));
}
