import { asc, eq, inArray } from "drizzle-orm";
import { clients } from "@/db/schema";
import type { Caches } from "@/lib/store/caches";
import type { Invalidation } from "@/lib/store/invalidation";
import type { Executor } from "@/lib/db/client";
import { SECRET_AUTH_METHODS, type ClientAuthMethod } from "@/lib/protocol/vocabulary";
import { randomId, randomToken, sha256 } from "@/lib/crypto";

export type Client = typeof clients.$inferSelect;
export type NewClient = Omit<typeof clients.$inferInsert, "id" | "secretHash" | "createdAt" | "updatedAt">;

export type AuthMethod = ClientAuthMethod;

/** Methods that authenticate with a shared secret, so the client gets one at creation. */
export function usesSecret(method: string): boolean {
  return (SECRET_AUTH_METHODS as readonly string[]).includes(method);
}

export function generateClientSecret(): string {
  return randomToken(32);
}

export async function insertClient(db: Executor, data: NewClient): Promise<{ client: Client; secret: string | null }> {
  const secret = usesSecret(data.authMethod) ? generateClientSecret() : null;
  const [client] = await db
    .insert(clients)
    .values({ ...data, id: randomId(), secretHash: secret ? sha256(secret) : null })
    .returning();
  return { client: client!, secret };
}

/** Creates the client `id` with `registration`, or replaces its registration (the built-in console client). */
export async function putClient(db: Executor, id: string, registration: Omit<typeof clients.$inferInsert, "id">): Promise<void> {
  await db.insert(clients).values({ id, ...registration }).onConflictDoUpdate({ target: clients.id, set: registration });
}

export async function updateClient(db: Executor, id: string, patch: Partial<NewClient>, now: Date): Promise<Client | undefined> {
  const [client] = await db
    .update(clients)
    .set({ ...patch, updatedAt: now })
    .where(eq(clients.id, id))
    .returning();
  return client;
}

/** Replaces the secret (or clears it when the method no longer uses one); returns the new secret once. */
export async function setClientSecret(db: Executor, id: string, secret: string | null, now: Date): Promise<Client | undefined> {
  const [client] = await db
    .update(clients)
    .set({ secretHash: secret ? sha256(secret) : null, updatedAt: now })
    .where(eq(clients.id, id))
    .returning();
  return client;
}

export async function deleteClient(db: Executor, id: string): Promise<boolean> {
  const rows = await db.delete(clients).where(eq(clients.id, id)).returning({ id: clients.id });
  return rows.length > 0;
}

export async function listClients(db: Executor): Promise<Client[]> {
  return db.select().from(clients).orderBy(asc(clients.createdAt));
}

/**
 * A client by id from the engine's cache: registrations are read on every protocol request.
 * Changes drop the entry everywhere after they commit (`mutate` with `clientChanged`).
 */
export function getClient(scope: { db: Executor; caches: Caches }, id: string): Promise<Client | undefined> {
  return scope.caches.clients.get(id, () =>
    scope.db
      .select()
      .from(clients)
      .where(eq(clients.id, id))
      .then((r) => r[0]),
  );
}

/** What decides the web origins a client's pages call the back-channel endpoints from. */
export type ClientOrigins = Pick<Client, "allowedOrigins" | "redirectUris">;

/** Every client's origin settings, from the engine's cache (dropped with any client's change). */
export function getClientOrigins(scope: { db: Executor; caches: Caches }): Promise<ClientOrigins[]> {
  return scope.caches.clientOrigins.get("all", () => scope.db.select({ allowedOrigins: clients.allowedOrigins, redirectUris: clients.redirectUris }).from(clients));
}

/** The invalidation for a changed or deleted client (lib/store/invalidation.ts `mutate`). */
export function clientChanged(id: string): Invalidation {
  return { cache: "clients", key: id };
}

/** Uncached read, for management operations that must see their own writes. */
export async function readClient(db: Executor, id: string): Promise<Client | undefined> {
  const [c] = await db.select().from(clients).where(eq(clients.id, id));
  return c;
}

/** Which of `ids` name existing clients. */
export async function listClientIds(db: Executor, ids: readonly string[]): Promise<string[]> {
  if (!ids.length) return [];
  return (await db.select({ id: clients.id }).from(clients).where(inArray(clients.id, [...ids]))).map((r) => r.id);
}
