import { and, asc, count, eq, ilike, inArray, ne, or, sql } from "drizzle-orm";
import { machineKeys, passwordCredentials, users } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { randomId } from "@/lib/crypto";
import { hashPassword } from "@/lib/passwords";

export type User = typeof users.$inferSelect;
export type NewUser = Omit<typeof users.$inferInsert, "id" | "createdAt" | "updatedAt">;
export type MachineKey = typeof machineKeys.$inferSelect;

export const ROLES = ["admin", "impersonation"] as const;

export class DuplicateUsername extends Error {}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } } | null | undefined;
  return e?.code === "23505" || e?.cause?.code === "23505";
}

export async function insertUser(db: Executor, data: NewUser, password?: string): Promise<User> {
  const id = randomId();
  try {
    const [user] = await db.insert(users).values({ ...data, id }).returning();
    if (password !== undefined) await setPassword(db, id, password, { changeRequired: !!data.passwordChangeRequiredSince, now: data.passwordChangeRequiredSince ?? user!.createdAt });
    return user!;
  } catch (err) {
    if (isUniqueViolation(err)) throw new DuplicateUsername(data.username);
    throw err;
  }
}

export async function updateUser(db: Executor, id: string, patch: Partial<NewUser>, now: Date): Promise<User | undefined> {
  try {
    const [user] = await db
      .update(users)
      .set({ ...patch, updatedAt: now })
      .where(eq(users.id, id))
      .returning();
    return user;
  } catch (err) {
    if (isUniqueViolation(err)) throw new DuplicateUsername(patch.username ?? "");
    throw err;
  }
}

export async function deleteUser(db: Executor, id: string): Promise<boolean> {
  const rows = await db.delete(users).where(eq(users.id, id)).returning({ id: users.id });
  return rows.length > 0;
}

export async function getUser(db: Executor, id: string): Promise<User | undefined> {
  const [u] = await db.select().from(users).where(eq(users.id, id));
  return u;
}

/**
 * The user for a login name: `username` (case-insensitive), or `username@primarydomain`
 * as introspection reports it. The login name is compared exactly otherwise (a `+` stays a `+`).
 */
export async function findUserByLoginName(db: Executor, loginName: string, primaryDomain?: string): Promise<User | undefined> {
  const name = loginName.trim();
  let candidates = [name];
  if (primaryDomain && name.toLowerCase().endsWith("@" + primaryDomain.toLowerCase())) {
    candidates = [name, name.slice(0, -(primaryDomain.length + 1))];
  }
  for (const c of candidates) {
    const [u] = await db
      .select()
      .from(users)
      .where(sql`lower(${users.username}) = lower(${c})`);
    if (u) return u;
  }
  return undefined;
}


export async function listUsers(
  db: Executor,
  opts: { search?: string; limit: number; offset: number; type?: "human" | "machine"; ids?: string[] },
): Promise<{ users: User[]; total: number }> {
  const conds = [];
  if (opts.search) {
    const pattern = `%${opts.search.replace(/[\\%_]/g, (m) => "\\" + m)}%`;
    conds.push(or(ilike(users.username, pattern), ilike(users.email, pattern)));
  }
  if (opts.type) conds.push(eq(users.type, opts.type));
  if (opts.ids) conds.push(inArray(users.id, opts.ids));
  const where = conds.length ? and(...conds) : undefined;
  const [rows, [total]] = await Promise.all([
    db.select().from(users).where(where).orderBy(asc(users.username)).limit(opts.limit).offset(opts.offset),
    db.select({ n: count() }).from(users).where(where),
  ]);
  return { users: rows, total: total?.n ?? 0 };
}

/**
 * Sets a user's password. A new password meets any demand for one, so the demand ends here, unless
 * this one is temporary (`changeRequired`: an administrator's, which the user must replace at the
 * next sign-in).
 */
export async function setPassword(db: Executor, userId: string, password: string, opts: { changeRequired?: boolean; now: Date }): Promise<void> {
  const now = opts.now;
  const hash = await hashPassword(password);
  await db
    .insert(passwordCredentials)
    .values({ userId, hash, changedAt: now })
    .onConflictDoUpdate({ target: passwordCredentials.userId, set: { hash, changedAt: now } });
  await db.update(users).set({ passwordChangeRequiredSince: opts.changeRequired ? now : null }).where(eq(users.id, userId));
}

export async function getPasswordHash(db: Executor, userId: string): Promise<string | undefined> {
  const [row] = await db.select().from(passwordCredentials).where(eq(passwordCredentials.userId, userId));
  return row?.hash;
}

export async function insertMachineKey(
  db: Executor,
  userId: string,
  publicJwk: Record<string, unknown>,
  alg: string,
  expiresAt: Date | null = null,
  id: string = randomId(),
): Promise<MachineKey> {
  const [k] = await db
    .insert(machineKeys)
    .values({ id, userId, publicJwk: { ...publicJwk }, alg, expiresAt })
    .returning();
  return k!;
}

export async function getMachineKey(db: Executor, keyId: string): Promise<MachineKey | undefined> {
  const [k] = await db.select().from(machineKeys).where(eq(machineKeys.id, keyId));
  return k;
}

export async function listMachineKeys(db: Executor, userId: string): Promise<MachineKey[]> {
  return db.select().from(machineKeys).where(eq(machineKeys.userId, userId)).orderBy(asc(machineKeys.createdAt));
}

export async function deleteMachineKey(db: Executor, userId: string, keyId: string): Promise<boolean> {
  const rows = await db
    .delete(machineKeys)
    .where(and(eq(machineKeys.userId, userId), eq(machineKeys.id, keyId)))
    .returning({ id: machineKeys.id });
  return rows.length > 0;
}

/** How many unlocked administrators there are besides `userId` (the instance must keep one). */
export async function countOtherActiveAdmins(db: Executor, userId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(users)
    .where(and(ne(users.id, userId), eq(users.locked, false), sql`'admin' = ANY(${users.roles})`));
  return row?.n ?? 0;
}

/** Up to ten users whose username or email equals these (case-insensitively). */
export function usersWithNameOrEmail(db: Executor, name: string, mail: string): Promise<{ id: string; username: string; email: string | null }[]> {
  return db
    .select({ id: users.id, username: users.username, email: users.email })
    .from(users)
    .where(or(sql`lower(${users.username}) = lower(${name})`, sql`lower(${users.email}) = lower(${mail})`))
    .limit(10);
}

/** Which of `ids` name existing users. */
export async function listUserIds(db: Executor, ids: readonly string[]): Promise<string[]> {
  if (!ids.length) return [];
  return (await db.select({ id: users.id }).from(users).where(inArray(users.id, [...ids]))).map((r) => r.id);
}

/** Login name (as given) → user id, for the names that exist; login names are case-insensitive. */
export async function userIdsByUsername(db: Executor, names: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!names.length) return out;
  const lower = [...new Set(names.map((n) => n.toLowerCase()))];
  const rows = await db.select({ id: users.id, username: users.username }).from(users).where(inArray(sql`lower(${users.username})`, lower));
  const byLower = new Map(rows.map((r) => [r.username.toLowerCase(), r.id]));
  for (const n of names) {
    const id = byLower.get(n.toLowerCase());
    if (id) out.set(n, id);
  }
  return out;
}

/** The users with this email address (case-insensitive); addresses are not unique. */
export async function findUsersByEmail(db: Executor, email: string): Promise<User[]> {
  return db
    .select()
    .from(users)
    .where(sql`lower(${users.email}) = lower(${email.trim()})`)
    .limit(5);
}
