import { and, eq, isNull, sql } from "drizzle-orm";
import { authorizationCodes, grants, sessions, users } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { randomToken, sha256 } from "@/lib/crypto";
import { sessionHasEnded, type Grant } from "./grants";
import type { User } from "./users";
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

/** Creates a single-use code (256 random bits) stored by its SHA-256; returns the code, shown once. */
export function createAuthorizationCodeWrite(db: Executor, c: NewAuthorizationCode, now: Date): Write<string> {
  const code = randomToken(32);
  const { lifetimeSeconds, ...rest } = c;
  const query = insertRow(db, authorizationCodes, {
    ...rest,
    codeHash: sha256(code),
    expiresAt: new Date(now.getTime() + lifetimeSeconds * 1000),
  });
  return { query, result: code };
}

export function createAuthorizationCode(db: Executor, c: NewAuthorizationCode, now: Date): Promise<string> {
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

/** Marks the code used. Exactly one concurrent caller gets `true`; any other is a replay. */
export function markCodeUsedWrite(db: Executor, codeHash: string, now: Date): GuardWrite {
  return {
    guard: statement(
      db,
      "codes.markUsed",
      (p) =>
        db
          .update(authorizationCodes)
          .set({ usedAt: sql`${p("now")}::timestamptz` })
          .where(and(eq(authorizationCodes.codeHash, p("codeHash")), isNull(authorizationCodes.usedAt)))
          .returning({ h: authorizationCodes.codeHash }),
      { now: now.toISOString(), codeHash },
    ),
  };
}

export function markCodeUsed(db: Executor, codeHash: string, now: Date): Promise<boolean> {
  return runGuard(markCodeUsedWrite(db, codeHash, now));
}
