import { and, eq, isNull, sql } from "drizzle-orm";
import { authorizationCodes, grants, sessions, users } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { randomToken, sha256 } from "@/lib/crypto";
import { sessionHasEnded, type Grant } from "./grants";
import type { User } from "./users";
import { notRevoked, sessionNotEnded, userAsRead } from "./guard-checks";
import { columnsOf, insertRow, preparedRead, statement } from "./statement";
import { runGuard, runWrite, type GuardWrite, type Write } from "./write";

export type AuthorizationCode = typeof authorizationCodes.$inferSelect;

export type NewAuthorizationCode = {
  grantId: string;
  clientId: string;
  userId: string;
  sessionId: string | null;
  redirectUri: string;
  scopes: string[];
  nonce: string | null;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  authTime: Date;
  amr: string[];
  lifetimeSeconds: number;
};

/** A new code, shown once, and its row as stored (what the code grant will read of it). */
export type IssuedCode = { code: string; stored: AuthorizationCode };

/** Creates a single-use code (256 random bits) stored by its SHA-256. */
export function createAuthorizationCodeWrite(db: Executor, c: NewAuthorizationCode, now: Date): Write<IssuedCode> {
  const code = randomToken(32);
  const { lifetimeSeconds, ...rest } = c;
  const stored: AuthorizationCode = {
    ...rest,
    codeHash: sha256(code),
    createdAt: now,
    expiresAt: new Date(now.getTime() + lifetimeSeconds * 1000),
    usedAt: null,
  };
  return { query: insertRow(db, authorizationCodes, stored), result: { code, stored } };
}

export function createAuthorizationCode(db: Executor, c: NewAuthorizationCode, now: Date): Promise<IssuedCode> {
  return runWrite(createAuthorizationCodeWrite(db, c, now));
}

/**
 * What the code grant reads of a code's grant (lib/oauth/grants/authorization-code.ts): whether it
 * was revoked, and the APIs and claims it covers (`columnsOf`).
 */
const REDEMPTION_GRANT_COLUMNS = ["id", "scopes", "claims", "resources", "revokedAt"] as const;
export type RedemptionGrant = Pick<Grant, (typeof REDEMPTION_GRANT_COLUMNS)[number]>;

/** A code and what redeeming it checks: its grant, its user, and whether its session has ended. */
export type Redemption = { code: AuthorizationCode; grant: RedemptionGrant | undefined; user: User | undefined; sessionEnded: boolean };

/**
 * The stored code (used or not) with its grant, user and session, in one query: the code grant
 * reads them all before it writes (lib/oauth/grants/authorization-code.ts). A code without a
 * session never has an ended one; a code whose session is gone, ended or expired has.
 */
export async function findCodeForRedemption(db: Executor, code: string, now: Date): Promise<Redemption | undefined> {
  const [row] = await preparedRead(db, "codes.findForRedemption", (p, name) =>
    db
      .select({
        code: authorizationCodes,
        grant: columnsOf(grants, REDEMPTION_GRANT_COLUMNS),
        user: users,
        // `id` first: Drizzle makes a left-joined object null when its first column is null.
        session: { id: sessions.id, endedAt: sessions.endedAt, absoluteExpiresAt: sessions.absoluteExpiresAt },
      })
      .from(authorizationCodes)
      .leftJoin(grants, eq(grants.id, authorizationCodes.grantId))
      .leftJoin(users, eq(users.id, authorizationCodes.userId))
      .leftJoin(sessions, eq(sessions.id, authorizationCodes.sessionId))
      .where(eq(authorizationCodes.codeHash, p("hash")))
      .prepare(name),
  ).execute({ hash: sha256(code) });
  if (!row) return undefined;
  const sessionEnded = row.code.sessionId !== null && sessionHasEnded(row.session, now);
  return { code: row.code, grant: row.grant ?? undefined, user: row.user ?? undefined, sessionEnded };
}

/** The stored code, used or not (a used one is how a replay is recognised). */
export async function findAuthorizationCode(db: Executor, code: string): Promise<AuthorizationCode | undefined> {
  const [row] = await db.select().from(authorizationCodes).where(eq(authorizationCodes.codeHash, sha256(code)));
  return row;
}

/** A code being redeemed: its hash, and its user's `updatedAt` when the read was from memory. */
export type CodeRedeeming = {
  codeHash: string;
  /**
   * For a read answered from memory (`Store.codeRedemptions`), the user's `updatedAt` as it was
   * read: a change since then loses the guard, so the ID token's claims are the user's as they are.
   * Null for a read just made, which must not lose to a change committed after it (a guard lost
   * in a transaction is answered from a new read, lib/oauth/grants/authorization-code.ts).
   */
  userVersion: Date | null;
};

/**
 * Marks the code used, and only if everything the code grant checked when it read the code still
 * holds when the write commits: the code unused and unexpired, its grant not revoked, its user
 * neither locked, deleted nor changed since a read from memory, its session (if any) not ended.
 *
 * Why all of it here: the read may be from memory (the code this instance issued,
 * `Store.codeRedemptions`), and another instance, or a logout here, may have revoked the grant or
 * ended the session since. With the checks in the guard, such a change that commits first makes
 * the guard lose, and the grant runs again in a transaction on a fresh read (lib/store/write.ts).
 * Exactly one concurrent caller wins; the others see `false`.
 */
export function markCodeUsedWrite(db: Executor, r: CodeRedeeming, now: Date): GuardWrite {
  const c = authorizationCodes;
  return {
    guard: statement(
      db,
      "codes.markUsed",
      (p) =>
        db
          .update(c)
          .set({ usedAt: sql`${p("now")}::timestamptz` })
          .where(
            and(
              eq(c.codeHash, p("codeHash")),
              isNull(c.usedAt),
              sql`${c.expiresAt} > ${p("now")}::timestamptz`,
              notRevoked(grants, c.grantId),
              userAsRead(c.userId, p("userVersion")),
              sessionNotEnded(c.sessionId, p("now")),
            ),
          )
          .returning({ h: c.codeHash }),
      { now: now.toISOString(), codeHash: r.codeHash, userVersion: r.userVersion?.toISOString() ?? null },
    ),
  };
}

export function markCodeUsed(db: Executor, r: CodeRedeeming, now: Date): Promise<boolean> {
  return runGuard(markCodeUsedWrite(db, r, now));
}
