import { and, asc, eq, gt, isNull, or } from "drizzle-orm";
import { personalAccessTokens, users } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { randomId, randomToken, sha256 } from "@/lib/crypto";

/** PATs carry a recognisable prefix so that secret scanners can find leaked ones. */
export const PAT_PREFIX = "torii_pat_";

export function generatePat(): string {
  return PAT_PREFIX + randomToken(32);
}

export async function insertPat(
  db: Executor,
  userId: string,
  token: string,
  expiresAt: Date | null = null,
): Promise<{ id: string; expiresAt: Date | null }> {
  const id = randomId();
  await db.insert(personalAccessTokens).values({ id, userId, tokenHash: sha256(token), expiresAt });
  return { id, expiresAt };
}

/** The user a PAT belongs to, if the PAT is known, unexpired and the user is not locked. */
export async function userForPat(db: Executor, token: string, now: Date) {
  // Lookup by SHA-256 of the token: equality on a hash of a 256-bit secret leaks nothing useful by timing.
  const [row] = await db
    .select({ user: users, patId: personalAccessTokens.id })
    .from(personalAccessTokens)
    .innerJoin(users, eq(users.id, personalAccessTokens.userId))
    .where(
      and(
        eq(personalAccessTokens.tokenHash, sha256(token)),
        or(isNull(personalAccessTokens.expiresAt), gt(personalAccessTokens.expiresAt, now)),
      ),
    );
  if (!row || row.user.locked) return undefined;
  return row;
}

export type PatInfo = { id: string; createdAt: Date; expiresAt: Date | null; lastUsedAt: Date | null };

/** A user's PATs, without anything that could authenticate. */
export async function listPats(db: Executor, userId: string): Promise<PatInfo[]> {
  return db
    .select({
      id: personalAccessTokens.id,
      createdAt: personalAccessTokens.createdAt,
      expiresAt: personalAccessTokens.expiresAt,
      lastUsedAt: personalAccessTokens.lastUsedAt,
    })
    .from(personalAccessTokens)
    .where(eq(personalAccessTokens.userId, userId))
    .orderBy(asc(personalAccessTokens.createdAt));
}

export async function deletePat(db: Executor, userId: string, patId: string): Promise<boolean> {
  const rows = await db
    .delete(personalAccessTokens)
    .where(and(eq(personalAccessTokens.userId, userId), eq(personalAccessTokens.id, patId)))
    .returning({ id: personalAccessTokens.id });
  return rows.length > 0;
}
