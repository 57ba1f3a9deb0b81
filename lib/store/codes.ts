import { and, eq, isNull } from "drizzle-orm";
import { authorizationCodes } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { randomToken, sha256 } from "@/lib/crypto";
import { runGuard, type GuardWrite } from "./write";

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
export async function createAuthorizationCode(db: Executor, c: NewAuthorizationCode, now: Date): Promise<string> {
  const code = randomToken(32);
  const { lifetimeSeconds, ...rest } = c;
  await db.insert(authorizationCodes).values({
    ...rest,
    codeHash: sha256(code),
    expiresAt: new Date(now.getTime() + lifetimeSeconds * 1000),
  });
  return code;
}

/** The stored code, used or not (a used one is how a replay is recognised). */
export async function findAuthorizationCode(db: Executor, code: string): Promise<AuthorizationCode | undefined> {
  const [row] = await db.select().from(authorizationCodes).where(eq(authorizationCodes.codeHash, sha256(code)));
  return row;
}

/** Marks the code used. Exactly one concurrent caller gets `true`; any other is a replay. */
export function markCodeUsedWrite(db: Executor, codeHash: string, now: Date): GuardWrite {
  return {
    guard: db
      .update(authorizationCodes)
      .set({ usedAt: now })
      .where(and(eq(authorizationCodes.codeHash, codeHash), isNull(authorizationCodes.usedAt)))
      .returning({ h: authorizationCodes.codeHash }),
  };
}

export function markCodeUsed(db: Executor, codeHash: string, now: Date): Promise<boolean> {
  return runGuard(markCodeUsedWrite(db, codeHash, now));
}
