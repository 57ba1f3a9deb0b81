import { and, asc, eq, getTableColumns, gt, inArray, isNull, sql, type Placeholder } from "drizzle-orm";
import { passwordCredentials, sessions, userAgents, userFactors, users } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { randomToken, sha256 } from "@/lib/crypto";
import { preparedRead, statement } from "./statement";
import type { Actor } from "./audit";
import type { User } from "./users";
import { runWrite, type Write } from "./write";

export type Session = typeof sessions.$inferSelect;
/**
 * A live session with its whole user: the sign-in policy reads the account's state, and the
 * authorization endpoint issues from the user as read here (the implicit flow's tokens, and what a
 * code's redemption is answered from, Store.codeRedemptions) without reading it again.
 */
export type SessionWithUser = Session & {
  user: User & {
    /** The user has a confirmed second factor (lib/store/factors.ts). */
    hasSecondFactor: boolean;
    /** When the password was last set; null: the user has none. */
    passwordChangedAt: Date | null;
  };
};

/** A new user-agent cookie value and the hash stored for it (the clear value is never stored). */
function newUserAgentCookie(): { cookie: string; cookieHash: string } {
  const cookie = randomToken(32);
  return { cookie, cookieHash: sha256(cookie) };
}

/** Creates a user agent; the returned cookie value is the only place its clear value exists. */
export async function createUserAgent(db: Executor): Promise<{ id: string; cookie: string }> {
  const { cookie, cookieHash } = newUserAgentCookie();
  const id = randomToken(16);
  await db.insert(userAgents).values({ id, cookieHash });
  return { id, cookie };
}

/** Gives a user agent a new cookie value, returned; the old one names nothing any more. */
export async function renewUserAgentCookie(db: Executor, userAgentId: string): Promise<string> {
  const { cookie, cookieHash } = newUserAgentCookie();
  await db.update(userAgents).set({ cookieHash }).where(eq(userAgents.id, userAgentId));
  return cookie;
}

/** A value that can be a user-agent cookie (randomToken(32)); anything else is looked up nowhere. */
function isPlausibleCookie(cookie: string): boolean {
  return cookie !== "" && cookie.length <= 100;
}

export async function findUserAgent(db: Executor, cookie: string): Promise<{ id: string } | undefined> {
  if (!isPlausibleCookie(cookie)) return undefined;
  const [ua] = await preparedRead(db, "sessions.findUserAgent", (p, name) =>
    db.select({ id: userAgents.id }).from(userAgents).where(eq(userAgents.cookieHash, p("hash"))).prepare(name),
  ).execute({ hash: sha256(cookie) });
  return ua;
}

/** What a session's user is read as (SessionWithUser's `user`). */
const sessionUser = {
  ...getTableColumns(users),
  hasSecondFactor: sql<boolean>`exists (select 1 from ${userFactors} where ${userFactors.userId} = ${users.id} and ${userFactors.confirmedAt} is not null)`,
  passwordChangedAt: passwordCredentials.changedAt,
};

/**
 * A session neither ended nor past either expiry at `now`: a time, or a prepared statement's
 * placeholder for one. Its user is checked apart.
 */
function sessionIsOpen(now: Date | Placeholder) {
  const at = now instanceof Date ? now : sql`${now}::timestamptz`;
  return and(isNull(sessions.endedAt), gt(sessions.idleExpiresAt, at), gt(sessions.absoluteExpiresAt, at));
}

/** `sessionIsOpen` for a session already read as open: neither expiry passed at `now` (an ended one is never read). */
export function sessionStillOpen(s: Pick<Session, "idleExpiresAt" | "absoluteExpiresAt">, now: Date): boolean {
  const t = now.getTime();
  return s.idleExpiresAt.getTime() > t && s.absoluteExpiresAt.getTime() > t;
}

/** A browser, by its user-agent row's id, with its live sessions (`browserWithSessions`). */
export type BrowserWithSessions = { id: string; sessions: SessionWithUser[] };

/** Sessions of a user agent that can still be used, by username, with their users. */
export async function liveSessions(db: Executor, userAgentId: string, now: Date): Promise<SessionWithUser[]> {
  const read = preparedRead(db, "sessions.live", (p, name) =>
    db
      .select({ s: sessions, user: sessionUser })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .leftJoin(passwordCredentials, eq(passwordCredentials.userId, users.id))
      .where(and(eq(sessions.userAgentId, p("userAgentId")), sessionIsOpen(p("now")), eq(users.locked, false)))
      .orderBy(asc(users.username))
      .prepare(name),
  );
  const rows = await read.execute({ userAgentId, now: now.toISOString() });
  return rows.map((r) => ({ ...r.s, user: r.user }));
}

/**
 * The browser a user-agent cookie names, with its live sessions (as `liveSessions` reads them):
 * both in one query, since the authorization endpoint needs both on every request and the second
 * would otherwise wait for the first. Undefined when no browser has this cookie.
 */
export async function browserWithSessions(db: Executor, cookie: string, now: Date): Promise<BrowserWithSessions | undefined> {
  if (!isPlausibleCookie(cookie)) return undefined;
  const read = preparedRead(db, "sessions.browser", (p, name) =>
    db
      .select({ browser: userAgents.id, s: sessions, user: sessionUser })
      .from(userAgents)
      // A browser without a live session still comes back, as one row without one.
      .leftJoin(sessions, and(eq(sessions.userAgentId, userAgents.id), sessionIsOpen(p("now"))))
      .leftJoin(users, and(eq(users.id, sessions.userId), eq(users.locked, false)))
      .leftJoin(passwordCredentials, eq(passwordCredentials.userId, users.id))
      .where(eq(userAgents.cookieHash, p("hash")))
      .orderBy(asc(users.username))
      .prepare(name),
  );
  const rows = await read.execute({ hash: sha256(cookie), now: now.toISOString() });
  if (!rows.length) return undefined;
  const live = rows.flatMap((r) => (r.s && r.user.id !== null ? [{ ...r.s, user: r.user as SessionWithUser["user"] }] : []));
  return { id: rows[0]!.browser, sessions: live };
}

export async function getLiveSession(
  db: Executor,
  userAgentId: string,
  sessionId: string,
  now: Date,
): Promise<SessionWithUser | undefined> {
  return (await liveSessions(db, userAgentId, now)).find((s) => s.id === sessionId);
}

export type SessionLifetimes = { sessionIdle: number; sessionAbsolute: number };

/** Where a sign-in came from: the client address and the browser's User-Agent, as sent (the audit's actor). */
export type SignInOrigin = Pick<Actor, "ip" | "userAgent">;

/** A User-Agent is kept to this length, as audit events keep it (lib/store/audit.ts). */
const MAX_USER_AGENT = 512;

/**
 * Records a successful authentication of `userId` in this user agent: a new session, or, when
 * the user already has a live one here, that session with a fresh auth time (one session per
 * user per browser keeps the account chooser meaningful).
 */
export async function recordAuthentication(
  db: Executor,
  opts: { userAgentId: string; userId: string; amr: string[]; lifetimes: SessionLifetimes; now: Date; from: SignInOrigin },
): Promise<Session> {
  const now = opts.now;
  const from = { ip: opts.from.ip ?? null, userAgent: opts.from.userAgent?.slice(0, MAX_USER_AGENT) || null };
  const idleExpiresAt = new Date(now.getTime() + opts.lifetimes.sessionIdle * 1000);
  const existing = (await liveSessions(db, opts.userAgentId, now)).find((s) => s.userId === opts.userId);
  if (existing) {
    const [s] = await db
      .update(sessions)
      .set({
        authTime: now,
        amr: opts.amr,
        lastActiveAt: now,
        idleExpiresAt: new Date(Math.min(idleExpiresAt.getTime(), existing.absoluteExpiresAt.getTime())),
        ...from,
      })
      .where(eq(sessions.id, existing.id))
      .returning();
    return s!;
  }
  const [s] = await db
    .insert(sessions)
    .values({
      id: randomToken(16),
      userAgentId: opts.userAgentId,
      userId: opts.userId,
      authTime: now,
      amr: opts.amr,
      lastActiveAt: now,
      idleExpiresAt,
      absoluteExpiresAt: new Date(now.getTime() + opts.lifetimes.sessionAbsolute * 1000),
      ...from,
    })
    .returning();
  return s!;
}

/** A second factor completed the session's sign-in: its methods and auth time are now these. */
export async function recordSecondFactor(db: Executor, sessionId: string, amr: string[], now: Date): Promise<void> {
  await db.update(sessions).set({ amr, authTime: now, lastActiveAt: now }).where(eq(sessions.id, sessionId));
}

/** Marks activity: the idle expiry moves forward, never past the absolute expiry. */
export function touchSessionWrite(db: Executor, sessionId: string, lifetimes: SessionLifetimes, now: Date): Write<void> {
  const query = statement(
    db,
    "sessions.touch",
    (p) =>
      db
        .update(sessions)
        .set({ lastActiveAt: sql`${p("now")}::timestamptz`, idleExpiresAt: sql`least(${sessions.absoluteExpiresAt}, ${p("idleUntil")}::timestamptz)` })
        .where(eq(sessions.id, p("id"))),
    { now: now.toISOString(), idleUntil: new Date(now.getTime() + lifetimes.sessionIdle * 1000).toISOString(), id: sessionId },
  );
  return { query, result: undefined };
}

export function touchSession(db: Executor, sessionId: string, lifetimes: SessionLifetimes, now: Date): Promise<void> {
  return runWrite(touchSessionWrite(db, sessionId, lifetimes, now));
}

/**
 * Ends sessions (logout). Returns the ended ones so that the caller can revoke their tokens and
 * record audit events. Without `sessionIds`, ends every live session of the user agent.
 */
export async function endSessions(
  db: Executor,
  userAgentId: string,
  sessionIds: string[] | undefined,
  now: Date,
): Promise<Session[]> {
  const conds = [eq(sessions.userAgentId, userAgentId), isNull(sessions.endedAt)];
  const ended = await db
    .update(sessions)
    .set({ endedAt: now })
    .where(and(...conds, sessionIds ? inArray(sessions.id, sessionIds) : undefined))
    .returning();
  return ended;
}

/**
 * Ids of the sessions of a user agent that have not been ended (live or merely expired), of one
 * user. Logout ends all of them: an expired session's offline tokens must not outlive it.
 */
export async function openSessionIdsOfUser(db: Executor, userAgentId: string, userId: string): Promise<string[]> {
  const rows = await db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.userAgentId, userAgentId), eq(sessions.userId, userId), isNull(sessions.endedAt)));
  return rows.map((r) => r.id);
}

/** Ends every open session of a user in every user agent (lock, deletion); returns their ids. */
export async function endAllSessionsOfUser(db: Executor, userId: string, now: Date): Promise<string[]> {
  const ended = await db
    .update(sessions)
    .set({ endedAt: now })
    .where(and(eq(sessions.userId, userId), isNull(sessions.endedAt)))
    .returning({ id: sessions.id });
  return ended.map((s) => s.id);
}

/** A user's live sessions in every browser, latest activity first (the account page's list). */
export async function liveSessionsOfUser(db: Executor, userId: string, now: Date): Promise<Session[]> {
  return db
    .select()
    .from(sessions)
    .where(and(eq(sessions.userId, userId), sessionIsOpen(now)))
    .orderBy(sql`${sessions.lastActiveAt} DESC`);
}

/** Ends one session of the user (in whatever browser); false when it was not an open session of theirs. */
export async function endUserSession(db: Executor, userId: string, sessionId: string, now: Date): Promise<boolean> {
  const ended = await db
    .update(sessions)
    .set({ endedAt: now })
    .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId), isNull(sessions.endedAt)))
    .returning({ id: sessions.id });
  return ended.length === 1;
}
