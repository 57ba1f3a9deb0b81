import { and, asc, count, eq, inArray, notInArray, sql } from "drizzle-orm";
import { unionAll } from "drizzle-orm/pg-core";
import { apis, clientRoles, clients, userRoles, users } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { randomId, randomToken, sha256 } from "@/lib/crypto";
import type { Caches } from "./caches";
import { revokeAudience } from "./grants";
import type { Invalidation } from "./invalidation";

export type Api = typeof apis.$inferSelect;
export type NewApi = Omit<typeof apis.$inferInsert, "id" | "secretHash" | "createdAt" | "updatedAt">;

/** The invalidation for any change to the API resources (`mutate`). */
export const API_CHANGED: Invalidation = { cache: "apis" };

export async function insertApi(db: Executor, data: NewApi): Promise<Api> {
  const [api] = await db.insert(apis).values({ ...data, id: randomId() }).returning();
  return api!;
}

/** Changes an API; roles it no longer defines are taken from every user and client that held them. */
export async function updateApi(db: Executor, id: string, patch: Partial<NewApi>, now: Date): Promise<Api | undefined> {
  const [api] = await db.update(apis).set({ ...patch, updatedAt: now }).where(eq(apis.id, id)).returning();
  if (api && patch.roles) {
    const keys = patch.roles.map((r) => r.key);
    await db.delete(userRoles).where(and(eq(userRoles.apiId, id), keys.length ? notInArray(userRoles.roleKey, keys) : undefined));
    await db.delete(clientRoles).where(and(eq(clientRoles.apiId, id), keys.length ? notInArray(clientRoles.roleKey, keys) : undefined));
  }
  return api;
}

/**
 * Deletes an API: its role assignments go with it (foreign keys), and clients stop naming it in
 * their `apiScopes`, and every token issued for it is revoked by its audience; callers drop the
 * token cache (`mutate` with `accessTokens`).
 */
export async function deleteApi(db: Executor, id: string, now: Date): Promise<Api | undefined> {
  const [api] = await db.delete(apis).where(eq(apis.id, id)).returning();
  if (api) await revokeAudience(db, api.identifier, "api_deleted", now);
  if (api) await db.update(clients).set({ apiScopes: sql`${clients.apiScopes} - ${api.identifier}::text` }).where(sql`${clients.apiScopes} ? ${api.identifier}::text`);
  return api;
}

export async function listApis(db: Executor): Promise<Api[]> {
  return db.select().from(apis).orderBy(asc(apis.createdAt));
}

export async function readApi(db: Executor, id: string): Promise<Api | undefined> {
  const [api] = await db.select().from(apis).where(eq(apis.id, id));
  return api;
}

/** Every API, from the engine's cache (resource indicators and scopes are checked on every request). */
export function getApis(scope: { db: Executor; caches: Caches }): Promise<Api[]> {
  return scope.caches.apis.get("all", () => listApis(scope.db));
}

/** A new introspection secret for the API; returned once, stored as a hash. */
export async function rotateApiSecret(db: Executor, id: string, now: Date): Promise<string | undefined> {
  const secret = randomToken(32);
  const [api] = await db.update(apis).set({ secretHash: sha256(secret), updatedAt: now }).where(eq(apis.id, id)).returning({ id: apis.id });
  return api ? secret : undefined;
}

type Holder = { userId: string } | { clientId: string };

/** The role keys a user or client holds, by API id. */
export async function rolesOf(db: Executor, holder: Holder): Promise<Record<string, string[]>> {
  const rows =
    "userId" in holder
      ? await db.select({ apiId: userRoles.apiId, key: userRoles.roleKey }).from(userRoles).where(eq(userRoles.userId, holder.userId))
      : await db.select({ apiId: clientRoles.apiId, key: clientRoles.roleKey }).from(clientRoles).where(eq(clientRoles.clientId, holder.clientId));
  const out: Record<string, string[]> = {};
  for (const r of rows) (out[r.apiId] ??= []).push(r.key);
  for (const k of Object.keys(out)) out[k]!.sort();
  return out;
}

/**
 * Every role a user holds, as `{[apiIdentifier]: roleKeys[]}`: the `roles` claim of ID tokens and
 * userinfo (scope `roles`), which are not for one API.
 */
export async function rolesByApi(db: Executor, userId: string): Promise<Record<string, string[]>> {
  const rows = await db
    .select({ identifier: apis.identifier, key: userRoles.roleKey })
    .from(userRoles)
    .innerJoin(apis, eq(apis.id, userRoles.apiId))
    .where(eq(userRoles.userId, userId))
    .orderBy(asc(apis.identifier), asc(userRoles.roleKey));
  const out: Record<string, string[]> = {};
  for (const r of rows) (out[r.identifier] ??= []).push(r.key);
  return out;
}

/** The role keys a user or client holds for one API (what its access tokens carry). */
export async function rolesFor(db: Executor, holder: Holder, apiId: string): Promise<string[]> {
  return (await rolesOf(db, holder))[apiId] ?? [];
}

/** Replaces the roles of a user or client for the APIs named in `byApi` (API id -> role keys); other APIs' roles stay. */
export async function setRoles(db: Executor, holder: Holder, byApi: Record<string, string[]>): Promise<void> {
  const apiIds = Object.keys(byApi);
  if (!apiIds.length) return;
  if ("userId" in holder) {
    await db.delete(userRoles).where(and(eq(userRoles.userId, holder.userId), inArray(userRoles.apiId, apiIds)));
    const rows = apiIds.flatMap((apiId) => [...new Set(byApi[apiId])].map((roleKey) => ({ userId: holder.userId, apiId, roleKey })));
    if (rows.length) await db.insert(userRoles).values(rows);
  } else {
    await db.delete(clientRoles).where(and(eq(clientRoles.clientId, holder.clientId), inArray(clientRoles.apiId, apiIds)));
    const rows = apiIds.flatMap((apiId) => [...new Set(byApi[apiId])].map((roleKey) => ({ clientId: holder.clientId, apiId, roleKey })));
    if (rows.length) await db.insert(clientRoles).values(rows);
  }
}

/** Gives one role of an API to many users and clients at once; those who hold it already keep it. */
export async function assignRole(db: Executor, apiId: string, roleKey: string, to: { userIds: readonly string[]; clientIds: readonly string[] }): Promise<void> {
  if (to.userIds.length) await db.insert(userRoles).values(to.userIds.map((userId) => ({ userId, apiId, roleKey }))).onConflictDoNothing();
  if (to.clientIds.length) await db.insert(clientRoles).values(to.clientIds.map((clientId) => ({ clientId, apiId, roleKey }))).onConflictDoNothing();
}

/** Takes one role of an API from many users and clients at once. */
export async function unassignRole(db: Executor, apiId: string, roleKey: string, from: { userIds: readonly string[]; clientIds: readonly string[] }): Promise<void> {
  if (from.userIds.length) await db.delete(userRoles).where(and(eq(userRoles.apiId, apiId), eq(userRoles.roleKey, roleKey), inArray(userRoles.userId, [...from.userIds])));
  if (from.clientIds.length) await db.delete(clientRoles).where(and(eq(clientRoles.apiId, apiId), eq(clientRoles.roleKey, roleKey), inArray(clientRoles.clientId, [...from.clientIds])));
}

/** Who holds one role of an API, sorted. */
export async function roleHolders(db: Executor, apiId: string, roleKey: string): Promise<{ userIds: string[]; clientIds: string[] }> {
  const users = await db.select({ id: userRoles.userId }).from(userRoles).where(and(eq(userRoles.apiId, apiId), eq(userRoles.roleKey, roleKey))).orderBy(asc(userRoles.userId));
  const cls = await db.select({ id: clientRoles.clientId }).from(clientRoles).where(and(eq(clientRoles.apiId, apiId), eq(clientRoles.roleKey, roleKey))).orderBy(asc(clientRoles.clientId));
  return { userIds: users.map((u) => u.id), clientIds: cls.map((c) => c.id) };
}

export type RoleHolder = { kind: "user" | "client"; id: string; name: string };

/**
 * One page of the holders of a role: users first (by login name), then clients (by name), so
 * that a page boundary never reorders what the console lists. `total` counts both kinds.
 */
export async function roleHolderPage(
  db: Executor,
  apiId: string,
  roleKey: string,
  page: { limit: number; offset: number },
): Promise<{ holders: RoleHolder[]; total: number }> {
  const ofUsers = db
    .select({ kind: sql<"user" | "client">`'user'::text`.as("kind"), id: sql<string>`${userRoles.userId}`.as("id"), name: sql<string>`${users.username}`.as("name"), sort: sql<string>`lower(${users.username})`.as("sort") })
    .from(userRoles)
    .innerJoin(users, eq(users.id, userRoles.userId))
    .where(and(eq(userRoles.apiId, apiId), eq(userRoles.roleKey, roleKey)));
  const ofClients = db
    .select({ kind: sql<"user" | "client">`'client'::text`.as("kind"), id: sql<string>`${clientRoles.clientId}`.as("id"), name: sql<string>`${clients.name}`.as("name"), sort: sql<string>`lower(${clients.name})`.as("sort") })
    .from(clientRoles)
    .innerJoin(clients, eq(clients.id, clientRoles.clientId))
    .where(and(eq(clientRoles.apiId, apiId), eq(clientRoles.roleKey, roleKey)));
  // 'user' sorts after 'client': descending kind lists users first. A union sorts by its own
  // columns only, hence the lower-cased name as a column of its own.
  const rows = await unionAll(ofUsers, ofClients).orderBy(sql`kind desc, sort, id`).limit(page.limit).offset(page.offset);
  const [u] = await db.select({ n: count() }).from(userRoles).where(and(eq(userRoles.apiId, apiId), eq(userRoles.roleKey, roleKey)));
  const [c] = await db.select({ n: count() }).from(clientRoles).where(and(eq(clientRoles.apiId, apiId), eq(clientRoles.roleKey, roleKey)));
  return { holders: rows.map(({ kind, id, name }) => ({ kind, id, name })), total: (u?.n ?? 0) + (c?.n ?? 0) };
}
