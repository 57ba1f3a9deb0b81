import { and, eq, gt, isNull, lt, sql } from "drizzle-orm";
import { authRequests } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { randomToken, sha256 } from "@/lib/crypto";
import { statement } from "./statement";
import { runGuard, type GuardWrite } from "./write";

export type AuthRequest = typeof authRequests.$inferSelect;
export type NewAuthRequest = Omit<typeof authRequests.$inferInsert, "idHash" | "createdAt" | "expiresAt" | "completedAt">;

/** Long enough to sign in (or register) without hurry; the request dies with it. */
export const AUTH_REQUEST_LIFETIME_SECONDS = 3600;

export async function createAuthRequest(db: Executor, data: NewAuthRequest, now: Date): Promise<{ id: string; row: AuthRequest }> {
  const id = randomToken(32);
  const [row] = await db
    .insert(authRequests)
    .values({ ...data, idHash: sha256(id), createdAt: now, expiresAt: new Date(now.getTime() + AUTH_REQUEST_LIFETIME_SECONDS * 1000) })
    .returning();
  return { id, row: row! };
}

/** A pending (not completed, not expired) request of this user agent, or nothing. */
export async function findPendingAuthRequest(
  db: Executor,
  id: string | null | undefined,
  userAgentId: string,
  now: Date,
): Promise<AuthRequest | undefined> {
  if (!id || id.length > 100) return undefined;
  const [row] = await db
    .select()
    .from(authRequests)
    .where(
      and(
        eq(authRequests.idHash, sha256(id)),
        eq(authRequests.userAgentId, userAgentId),
        isNull(authRequests.completedAt),
        gt(authRequests.expiresAt, now),
      ),
    );
  return row;
}

export async function updateAuthRequest(
  db: Executor,
  id: string,
  patch: Partial<Pick<AuthRequest, "loginName" | "sessionId" | "formError" | "formValues" | "prompt" | "consentDenied" | "webauthnChallenge">>,
): Promise<void> {
  await db.update(authRequests).set(patch).where(eq(authRequests.idHash, sha256(id)));
}

/** Takes the passkey prompt's challenge of the request: it answers one passkey response, then it is gone. */
export async function takeWebauthnChallenge(db: Executor, id: string): Promise<string | null> {
  const [row] = await db
    .select({ c: authRequests.webauthnChallenge })
    .from(authRequests)
    .where(eq(authRequests.idHash, sha256(id)));
  if (!row?.c) return null;
  const taken = await db
    .update(authRequests)
    .set({ webauthnChallenge: null })
    .where(and(eq(authRequests.idHash, sha256(id)), eq(authRequests.webauthnChallenge, row.c)))
    .returning({ h: authRequests.idHash });
  return taken.length ? row.c : null;
}

/** Marks the request used; false when another request got there first (it is single-use). */
export function completeAuthRequestWrite(db: Executor, id: string, now: Date): GuardWrite {
  return {
    guard: statement(
      db,
      "authRequests.complete",
      (p) =>
        db
          .update(authRequests)
          .set({ completedAt: sql`${p("now")}::timestamptz` })
          .where(and(eq(authRequests.idHash, p("idHash")), isNull(authRequests.completedAt)))
          .returning({ h: authRequests.idHash }),
      { now: now.toISOString(), idHash: sha256(id) },
    ),
  };
}

export function completeAuthRequest(db: Executor, id: string, now: Date): Promise<boolean> {
  return runGuard(completeAuthRequestWrite(db, id, now));
}

export async function purgeExpiredAuthRequests(db: Executor, now: Date): Promise<void> {
  await db.delete(authRequests).where(lt(authRequests.expiresAt, now));
}
