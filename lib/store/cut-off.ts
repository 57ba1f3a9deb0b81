import type { Executor } from "@/lib/db/client";
import { revokeAllGrants, revokeSessionTokens } from "./grants";
import { endAllSessionsOfUser } from "./sessions";

/**
 * A locked or deleted user keeps nothing: every browser session ends and every token issued to
 * the user (through a session or not) is revoked, JWTs included.
 */
export async function cutOffUser(db: Executor, userId: string, reason: string, now = new Date()): Promise<void> {
  for (const sessionId of await endAllSessionsOfUser(db, userId, now)) {
    await revokeSessionTokens(db, sessionId, reason, { now });
  }
  await revokeAllGrants(db, { userId }, reason, now);
}

/** A deleted client's grants and tokens are revoked with it. */
export async function cutOffClient(db: Executor, clientId: string, reason: string, now = new Date()): Promise<void> {
  await revokeAllGrants(db, { clientId }, reason, now);
}
