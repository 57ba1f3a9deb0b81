import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessions, userFactors, users } from "@/db/schema";
import { randomToken } from "@/lib/crypto";
import { browserWithSessions, createUserAgent, endSessions, liveSessions, liveSessionsOfUser, recordAuthentication } from "@/lib/store/sessions";
import { insertUser } from "@/lib/store/users";
import { startTestInstance, type TestInstance } from "./harness";
import { CHALLENGE, makeClient } from "./token-support";

/**
 * The authorization endpoint reads the browser of its user-agent cookie and that browser's live
 * sessions in one query (browserWithSessions). It must find exactly what the two reads it
 * replaces found: the browser by its cookie, and the sessions liveSessions gives.
 */
let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const LIFETIMES = { sessionIdle: 3600, sessionAbsolute: 7200 };
const user = (username: string) => insertUser(t.inst.db, { type: "human", username: `${username}-${randomToken(4)}`, roles: [] });

describe("a browser with its live sessions, in one read", () => {
  it("is nothing for an unknown, empty or oversized cookie", async () => {
    const now = new Date();
    expect(await browserWithSessions(t.inst.db, randomToken(32), now)).toBeUndefined();
    expect(await browserWithSessions(t.inst.db, "", now)).toBeUndefined();
    expect(await browserWithSessions(t.inst.db, "x".repeat(101), now)).toBeUndefined();
  });

  it("is the browser with no sessions when it has none that can be used", async () => {
    const ua = await createUserAgent(t.inst.db);
    expect(await browserWithSessions(t.inst.db, ua.cookie, new Date())).toEqual({ id: ua.id, sessions: [] });

    // Ended, expired, and of a locked user: none of them counts.
    const now = new Date();
    const ended = await recordAuthentication(t.inst.db, { userAgentId: ua.id, userId: (await user("ended")).id, amr: ["pwd"], lifetimes: LIFETIMES, now, from: {} });
    await endSessions(t.inst.db, ua.id, [ended.id], now);
    await recordAuthentication(t.inst.db, { userAgentId: ua.id, userId: (await user("stale")).id, amr: ["pwd"], lifetimes: LIFETIMES, now: new Date(now.getTime() - 7_300_000), from: {} });
    const locked = await user("locked");
    await recordAuthentication(t.inst.db, { userAgentId: ua.id, userId: locked.id, amr: ["pwd"], lifetimes: LIFETIMES, now, from: {} });
    await t.inst.db.update(users).set({ locked: true }).where(eq(users.id, locked.id));
    expect(await browserWithSessions(t.inst.db, ua.cookie, now)).toEqual({ id: ua.id, sessions: [] });
    expect(await liveSessions(t.inst.db, ua.id, now)).toEqual([]);
  });

  it("has exactly the sessions liveSessions gives, in its order, with their users", async () => {
    const ua = await createUserAgent(t.inst.db);
    const other = await createUserAgent(t.inst.db);
    const now = new Date();
    const [zed, amy, elsewhere] = [await user("zed"), await user("amy"), await user("elsewhere")];
    for (const u of [zed, amy]) await recordAuthentication(t.inst.db, { userAgentId: ua.id, userId: u.id, amr: ["pwd"], lifetimes: LIFETIMES, now, from: {} });
    await recordAuthentication(t.inst.db, { userAgentId: other.id, userId: elsewhere.id, amr: ["pwd"], lifetimes: LIFETIMES, now, from: {} });
    await t.inst.db.insert(userFactors).values({ id: randomToken(12), userId: zed.id, type: "totp", name: "phone", secretEnc: "x", confirmedAt: now });

    const found = await browserWithSessions(t.inst.db, ua.cookie, now);
    expect(found?.id).toBe(ua.id);
    expect(found?.sessions.map((s) => s.user.id)).toEqual([amy.id, zed.id]);
    expect(found?.sessions.map((s) => s.user.hasSecondFactor)).toEqual([false, true]);
    expect(found?.sessions).toEqual(await liveSessions(t.inst.db, ua.id, now));
    // Past the sessions' idle expiry, none is live any more.
    const later = new Date(now.getTime() + 3_601_000);
    expect(await browserWithSessions(t.inst.db, ua.cookie, later)).toEqual({ id: ua.id, sessions: [] });
    expect((await t.inst.db.select().from(sessions).where(eq(sessions.userAgentId, ua.id))).length).toBe(2);
  });

  it("at the authorization endpoint: a locked user's open session signs no one in (prompt=none is login_required), an unlocked one does", async () => {
    const { client } = await makeClient(t);
    const u = await user("signed-in");
    const ua = await createUserAgent(t.inst.db);
    await recordAuthentication(t.inst.db, { userAgentId: ua.id, userId: u.id, amr: ["pwd"], lifetimes: LIFETIMES, now: new Date(), from: {} });
    const query = new URLSearchParams({ client_id: client.id, redirect_uri: "https://rp.example/cb", response_type: "code", scope: "openid", prompt: "none", state: "s1", code_challenge: CHALLENGE, code_challenge_method: "S256" });
    const authorize = async () => {
      const res = await fetch(`${t.baseUrl}/oauth/v2/authorize?${query}`, { headers: { cookie: `torii_ua=${ua.cookie}` }, redirect: "manual" });
      return new URL(res.headers.get("location") ?? "", t.baseUrl).searchParams;
    };
    expect((await authorize()).get("code")).toBeTruthy();
    await t.inst.db.update(users).set({ locked: true }).where(eq(users.id, u.id));
    const refused = await authorize();
    expect(refused.get("error")).toBe("login_required");
    expect(refused.get("state")).toBe("s1");
    expect(refused.get("code")).toBeNull();
  });
});

describe("where a session's sign-in came from (the account page's list)", () => {
  it("is kept with the session, the User-Agent cut to 512 characters, and follows the latest sign-in in that browser", async () => {
    const u = await user("origin");
    const ua = await createUserAgent(t.inst.db);
    const firefox = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0";
    const first = await recordAuthentication(t.inst.db, { userAgentId: ua.id, userId: u.id, amr: ["pwd"], lifetimes: LIFETIMES, now: new Date(), from: { ip: "203.0.113.7", userAgent: firefox } });
    expect(await liveSessionsOfUser(t.inst.db, u.id, new Date())).toEqual([expect.objectContaining({ id: first.id, ip: "203.0.113.7", userAgent: firefox })]);

    // Signing in again in the same browser refreshes that session, and where it came from.
    const long = "Mozilla/5.0 " + "x".repeat(600);
    const again = await recordAuthentication(t.inst.db, { userAgentId: ua.id, userId: u.id, amr: ["pwd"], lifetimes: LIFETIMES, now: new Date(), from: { ip: "2001:db8::1", userAgent: long } });
    expect(again.id).toBe(first.id);
    const [kept] = await liveSessionsOfUser(t.inst.db, u.id, new Date());
    expect(kept).toMatchObject({ ip: "2001:db8::1", userAgent: long.slice(0, 512) });

    // Nothing known (a test or an internal caller): both stay empty rather than made up.
    const elsewhere = await createUserAgent(t.inst.db);
    const bare = await recordAuthentication(t.inst.db, { userAgentId: elsewhere.id, userId: u.id, amr: ["pwd"], lifetimes: LIFETIMES, now: new Date(), from: { userAgent: "" } });
    expect(bare).toMatchObject({ ip: null, userAgent: null });
  });
});
