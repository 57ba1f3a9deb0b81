import { and, eq, inArray, sql } from "drizzle-orm";
import { clients, consents } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { revokeAllGrants } from "./grants";

/**
 * What a consent covers: the protocol's scopes (openid, profile, ...) and, per API (resource
 * identifier), that API's scopes. An API is a key even with no scope: access to the API itself
 * was allowed. API scope names are only unique within their API, so they are kept per API: a
 * scope allowed for one API does not count for another that defines the same name.
 */
export type ConsentSet = { scopes: readonly string[]; apis: Readonly<Record<string, readonly string[]>> };

/** The union of two consents, in a stable (sorted) order: a later request for less asks nothing. */
export function mergeConsent(a: ConsentSet | undefined, b: ConsentSet): { scopes: string[]; apis: Record<string, string[]> } {
  const union = (x: readonly string[] = [], y: readonly string[] = []) => [...new Set([...x, ...y])].sort();
  const apis: Record<string, string[]> = {};
  for (const key of [...new Set([...Object.keys(a?.apis ?? {}), ...Object.keys(b.apis)])].sort()) apis[key] = union(a?.apis[key], b.apis[key]);
  return { scopes: union(a?.scopes, b.scopes), apis };
}

/** What a user allowed a client: protocol scopes, APIs with their scopes (lib/login/consent-set.ts), and when last. */
export type Consent = { scopes: string[]; apis: Record<string, string[]>; grantedAt: Date };

/** What each of `userIds` allowed `clientId`, by user id (users without a consent are absent). */
export async function consentsOf(db: Executor, clientId: string, userIds: readonly string[]): Promise<Record<string, Consent>> {
  if (!userIds.length) return {};
  const rows = await db
    .select({ userId: consents.userId, scopes: consents.scopes, apis: consents.apiScopes, grantedAt: consents.grantedAt })
    .from(consents)
    .where(and(eq(consents.clientId, clientId), inArray(consents.userId, [...userIds])));
  return Object.fromEntries(rows.map((r) => [r.userId, { scopes: r.scopes, apis: r.apis, grantedAt: r.grantedAt }]));
}

/**
 * Records that the user allowed `allowed` (added to what was allowed before) at `now`. The row is
 * read for update first so that two answers at once both end up in the union.
 */
export async function grantConsent(db: Executor, userId: string, clientId: string, allowed: ConsentSet, now: Date): Promise<void> {
  const [before] = await db
    .select({ scopes: consents.scopes, apis: consents.apiScopes })
    .from(consents)
    .where(and(eq(consents.userId, userId), eq(consents.clientId, clientId)))
    .for("update");
  const merged = mergeConsent(before, allowed);
  await db
    .insert(consents)
    .values({ userId, clientId, scopes: merged.scopes, apiScopes: merged.apis, grantedAt: now })
    .onConflictDoUpdate({
      target: [consents.userId, consents.clientId],
      set: { scopes: merged.scopes, apiScopes: merged.apis, grantedAt: now },
    });
}

export type ConsentView = { clientId: string; clientName: string; scopes: string[]; apis: Record<string, string[]>; grantedAt: Date };

/** A user's consents with the applications' names, most recent first. */
export async function listUserConsents(db: Executor, userId: string): Promise<ConsentView[]> {
  return db
    .select({ clientId: consents.clientId, clientName: clients.name, scopes: consents.scopes, apis: consents.apiScopes, grantedAt: consents.grantedAt })
    .from(consents)
    .innerJoin(clients, eq(clients.id, consents.clientId))
    .where(eq(consents.userId, userId))
    .orderBy(sql`${consents.grantedAt} DESC`);
}

/**
 * Withdraws a consent: the next request of that client asks again, and everything the client
 * holds for the user (refresh tokens, access tokens) is revoked with its grants. False when there
 * was no consent. Callers drop the active-token cache when this commits (`mutate` with
 * `accessTokens`).
 */
export async function revokeConsent(db: Executor, userId: string, clientId: string, now: Date): Promise<boolean> {
  const gone = await db
    .delete(consents)
    .where(and(eq(consents.userId, userId), eq(consents.clientId, clientId)))
    .returning({ userId: consents.userId });
  if (!gone.length) return false;
  await revokeAllGrants(db, { clientId, userId }, "consent_revoked", now);
  return true;
}
