import { and, eq, gt, inArray, isNull, sql } from "drizzle-orm";
import { clients, grants, refreshTokenFamilies, sessions, tokenRevocations, tokens } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { randomToken } from "@/lib/crypto";
import { longestTokenLifetime } from "./lifetimes";
import { insertRow } from "./statement";
import { runWrite, type Write } from "./write";

export type Grant = typeof grants.$inferSelect;

export type NewGrant = {
  clientId: string;
  userId: string | null;
  sessionId: string | null;
  grantType: string;
  scopes: string[];
  /** User claims the `claims` request parameter asked for (OIDC Core 5.5). */
  claims?: { idToken: string[]; userinfo: string[] } | null;
  /** The APIs (identifiers) the grant covers (RFC 8707 resource indicators). */
  resources?: string[];
  expiresAt: Date;
};

export function createGrantWrite(db: Executor, g: NewGrant): Write<{ id: string }> {
  const id = randomToken(16);
  return { query: insertRow(db, grants, { id, ...g }), result: { id } };
}

export function createGrant(db: Executor, g: NewGrant): Promise<{ id: string }> {
  return runWrite(createGrantWrite(db, g));
}

export async function getGrant(db: Executor, id: string): Promise<Grant | undefined> {
  const [g] = await db.select().from(grants).where(eq(grants.id, id));
  return g;
}

/**
 * How long a revocation record must live: until every JWT it could cover has expired anyway.
 * JWTs are not stored, so the longest configured access/ID token lifetime bounds that.
 */
export async function revocationHorizon(db: Executor, now: Date): Promise<Date> {
  return new Date(now.getTime() + ((await longestTokenLifetime(db)) + 300) * 1000);
}

async function recordRevocation(
  db: Executor,
  subjectType: "jti" | "grant" | "session" | "audience",
  subjectId: string,
  reason: string,
  expiresAt: Date,
): Promise<void> {
  await db
    .insert(tokenRevocations)
    .values({ subjectType, subjectId, reason, expiresAt })
    .onConflictDoUpdate({
      target: [tokenRevocations.subjectType, tokenRevocations.subjectId],
      // A repeated revocation covers everything issued up to now, so its moment moves forward.
      set: { expiresAt: sql`greatest(${tokenRevocations.expiresAt}, excluded.expires_at)`, createdAt: sql`excluded.created_at` },
    });
}

/**
 * Revokes a grant and everything issued from it: its refresh families (and so their tokens:
 * every use of a refresh token checks its family and grant, lib/store/tokens.ts, so the token rows
 * are left as they are), and (through a `grant` revocation record) every access token carrying
 * its id.
 */
export async function revokeGrant(db: Executor, grantId: string, reason: string, now: Date, horizon?: Date): Promise<void> {
  await db.update(grants).set({ revokedAt: now }).where(and(eq(grants.id, grantId), isNull(grants.revokedAt)));
  await db
    .update(refreshTokenFamilies)
    .set({ revokedAt: now, revokedReason: reason })
    .where(and(eq(refreshTokenFamilies.grantId, grantId), isNull(refreshTokenFamilies.revokedAt)));
  await recordRevocation(db, "grant", grantId, reason, horizon ?? (await revocationHorizon(db, now)));
}

/**
 * Revokes a refresh family, its tokens and the access tokens issued from it. A family belongs to
 * exactly one grant (one per code or token-endpoint call), so revoking that grant does it all:
 * the grant's stored tokens and families, and the JWT access tokens, which carry the grant id.
 */
export async function revokeFamily(db: Executor, familyId: string, reason: string, now: Date): Promise<void> {
  const [f] = await db.select({ grantId: refreshTokenFamilies.grantId }).from(refreshTokenFamilies).where(eq(refreshTokenFamilies.id, familyId));
  if (f) await revokeGrant(db, f.grantId, reason, now);
}

/**
 * Revokes every token issued from a browser session (logout): its grants and their refresh
 * families (a family has its grant's session), which ends their refresh tokens, and its access
 * tokens by their `sid` (a revocation record: they are not stored). Both are found through the
 * grants' session index, so a logout reads only that session's rows.
 */
export async function revokeSessionTokens(
  db: Executor,
  sessionId: string,
  reason: string,
  opts: { now: Date; horizon?: Date },
): Promise<void> {
  const now = opts.now;
  const sessionGrants = db.select({ id: grants.id }).from(grants).where(eq(grants.sessionId, sessionId));
  await db
    .update(refreshTokenFamilies)
    .set({ revokedAt: now, revokedReason: reason })
    .where(and(inArray(refreshTokenFamilies.grantId, sessionGrants), isNull(refreshTokenFamilies.revokedAt)));
  await db.update(grants).set({ revokedAt: now }).where(and(eq(grants.sessionId, sessionId), isNull(grants.revokedAt)));
  await recordRevocation(db, "session", sessionId, reason, opts.horizon ?? (await revocationHorizon(db, now)));
}

/** Revokes one JWT access token by its `jti`. */
export async function revokeJti(db: Executor, jti: string, reason: string, expiresAt: Date): Promise<void> {
  await recordRevocation(db, "jti", jti, reason, expiresAt);
}

/** Whether a browser session has ended (logout) or was removed; tokens are no longer issued from it. */
export async function sessionEnded(db: Executor, sessionId: string, now: Date): Promise<boolean> {
  const [s] = await db
    .select({ endedAt: sessions.endedAt, absoluteExpiresAt: sessions.absoluteExpiresAt })
    .from(sessions)
    .where(eq(sessions.id, sessionId));
  return sessionHasEnded(s, now);
}

/** A session that is gone, was ended (logout) or reached its absolute lifetime issues nothing more. */
export function sessionHasEnded(s: { endedAt: Date | null; absoluteExpiresAt: Date } | null | undefined, now: Date): boolean {
  return !s || s.endedAt !== null || s.absoluteExpiresAt <= now;
}

/**
 * Revokes every live grant of a client or of a user (or of a client for one user), with all it
 * issued: when a client is deleted, a user is locked or deleted, or a consent is withdrawn,
 * nothing issued to them may stay usable.
 */
export async function revokeAllGrants(
  db: Executor,
  by: { clientId: string; userId?: string } | { userId: string },
  reason: string,
  now: Date,
): Promise<number> {
  // A client's grants, a user's, or (consent withdrawn) one client's for one user.
  const owner = and("clientId" in by ? eq(grants.clientId, by.clientId) : undefined, by.userId !== undefined ? eq(grants.userId, by.userId) : undefined);
  const open = await db
    .select({ id: grants.id })
    .from(grants)
    .where(and(owner, isNull(grants.revokedAt), gt(grants.expiresAt, now)));
  const horizon = open.length ? await revocationHorizon(db, now) : now;
  for (const g of open) await revokeGrant(db, g.id, reason, now, horizon);
  return open.length;
}

/**
 * Revokes every access token for an audience (an API being deleted): stored ones at once, JWTs
 * through a revocation record until the longest token lifetime has passed.
 */
export async function revokeAudience(db: Executor, audience: string, reason: string, now: Date): Promise<void> {
  await db
    .update(tokens)
    .set({ revokedAt: now })
    .where(and(isNull(tokens.revokedAt), sql`${tokens.audience} @> ARRAY[${audience}]::text[]`));
  await recordRevocation(db, "audience", audience, reason, await revocationHorizon(db, now));
}

/** An application holding live grants of a user: the account page's "signed-in applications". */
export type UserApp = { clientId: string; clientName: string; firstParty: boolean; lastGrantAt: Date };

/** The applications with live grants of the user, latest first. */
export async function appsOfUser(db: Executor, userId: string, now: Date): Promise<UserApp[]> {
  const rows = await db
    .select({ clientId: grants.clientId, clientName: clients.name, firstParty: clients.firstParty, lastGrantAt: sql<Date>`max(${grants.createdAt})` })
    .from(grants)
    .innerJoin(clients, eq(clients.id, grants.clientId))
    .where(and(eq(grants.userId, userId), isNull(grants.revokedAt), gt(grants.expiresAt, now)))
    .groupBy(grants.clientId, clients.name, clients.firstParty)
    .orderBy(sql`max(${grants.createdAt}) DESC`);
  // PGlite and node-postgres return an aggregate's timestamp as text.
  return rows.map((r) => ({ ...r, lastGrantAt: new Date(r.lastGrantAt) }));
}
