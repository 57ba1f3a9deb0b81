import type { Executor } from "@/lib/db/client";
import { revocationHorizon, revokeAllGrants, revokeSessionTokens } from "./grants";
import { endAllSessionsOfUser } from "./sessions";

/**
 * A locked or deleted user keeps nothing: every browser session ends and every token issued to
 * the user (through a session or not) is revoked, JWTs included.
 */
export async function cutOffUser(db: Executor, userId: string, reason: string, now: Date): Promise<void> {
  const ended = await endAllSessionsOfUser(db, userId, now);
  const horizon = ended.length ? await revocationHorizon(db, now) : now;
  for (const sessionId of ended) await revokeSessionTokens(db, sessionId, reason, { now, horizon });
  await revokeAllGrants(db, { userId }, reason, now);
}

/** A deleted client's grants and tokens are revoked with it. */
export async function cutOffClient(db: Executor, clientId: string, reason: string, now: Date): Promise<void> {
  await revokeAllGrants(db, { clientId }, reason, now);
}
