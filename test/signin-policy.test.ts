import { describe, expect, it } from "vitest";
import type { Prompt } from "@/lib/oauth/params/authorize";
import { ACR } from "@/lib/protocol/vocabulary";
import { chooserEntries, nextStep, offersRegistration, type PolicyAccount, type PolicyInput, type Step } from "@/lib/login/signin-policy";
import type { ConsentSet } from "@/lib/login/consent-set";

/**
 * The sign-in policy as a table: every combination of prompt × the browser's sessions × max_age ×
 * id_token_hint × login_hint on the first pass (the authorization endpoint, nothing chosen yet),
 * and every combination of prompt × max_age × id_token_hint × the account signed in or picked
 * during the request (the callback). Steps are written as short strings so that a failing row
 * reads as what the browser would see.
 */

const NOW = new Date("2026-11-23T12:00:00.500Z");
const ago = (ms: number) => new Date(NOW.getTime() - ms);
/** The request was created 10 s ago; existing sessions signed in 5 minutes ago. */
const CREATED = ago(10_000);
const OLD = ago(300_000);

type Acc = PolicyAccount & { label: string };
const account = (username: string, authTime: Date, locked = false): Acc => ({ label: username, userId: `u-${username}`, username, authTime, locked });

const USERS: Record<string, { username: string; locked: boolean }> = {
  "u-alice": { username: "alice", locked: false },
  "u-bob": { username: "bob", locked: false },
  "u-carol": { username: "carol", locked: false },
  "u-lena": { username: "lena", locked: true },
};

const SESSIONS = {
  none: [] as Acc[],
  one: [account("alice", OLD)],
  two: [account("alice", OLD), account("bob", OLD)],
  lockedUser: [account("lena", OLD, true)],
};
type Sessions = keyof typeof SESSIONS;

const MAX_AGE = { absent: null, zero: 0, large: 86_400, expired: 60 } as const;
type MaxAge = keyof typeof MAX_AGE;

/** `matchesSession`: the hint names alice (who has a session in `one` and `two`); `matchesNone`: carol, who has none. */
const ID_TOKEN_HINT = { absent: null, matchesSession: "u-alice", matchesNone: "u-carol" } as const;
type IdTokenHint = keyof typeof ID_TOKEN_HINT;

type LoginHint = "absent" | "matches" | "noMatch";
/** `matches` names the browser's last session's user (bob of two, lena's locked one), alice when there is none. */
function loginHintValue(h: LoginHint, sessions: Sessions): string | null {
  if (h === "absent") return null;
  if (h === "noMatch") return "dave";
  const s = SESSIONS[sessions];
  return s.length ? s[s.length - 1]!.username.toUpperCase() : "alice";
}

/** `consent` and `login consent` for a first-party client, which never asks for consent: as absent and login. */
const PROMPTS: Record<string, Prompt[]> = {
  absent: [],
  none: ["none"],
  login: ["login"],
  select_account: ["select_account"],
  create: ["create"],
  consent: ["consent"],
  "login consent": ["login", "consent"],
};

function input(o: { prompt: Prompt[]; sessions: Acc[]; maxAge: number | null; hintSubject: string | null; loginHint: string | null; chosen?: Acc | null }): PolicyInput<Acc> {
  const hint = o.hintSubject ? USERS[o.hintSubject] : undefined;
  return {
    request: { prompt: o.prompt, maxAge: o.maxAge, loginHint: o.loginHint, hintSubject: o.hintSubject, createdAt: CREATED },
    sessions: o.sessions,
    chosen: o.chosen ?? null,
    hintUser: hint ? { username: hint.username, locked: hint.locked } : null,
    primaryDomain: "example.com",
    now: NOW,
  };
}

/** A step as the browser sees it. */
function show(step: Step<Acc>): string {
  switch (step.step) {
    case "finish":
      return `finish ${step.account.label}`;
    case "signIn":
      return `signIn ${step.loginName ?? "-"}${step.notice ? ` (${step.notice.kind}: ${step.notice.signedInAs})` : ""}`;
    case "reauthenticate":
      return `password ${step.account.label}`;
    case "chooseAccount":
      return "chooser";
    case "register":
      return "register";
    case "consent":
      return `consent ${step.account.label}`;
    case "verifyEmail":
      return `verifyEmail ${step.account.label}`;
    case "secondFactor":
      return `secondFactor ${step.account.label}`;
    case "enrolFactor":
      return `enrolFactor ${step.account.label}`;
    case "changePassword":
      return `changePassword ${step.account.label}`;
    case "error":
      return step.error;
  }
}

/**
 * What OIDC Core 3.1.2.1 and the hosted login promise on the first pass, rule by rule:
 * - a locked user's session counts as none; an id_token_hint narrows the sessions to its subject;
 * - the request is about the hinted user's session, else the login hint's, else the only session;
 * - prompt=none answers at once: that session if fresh enough, account_selection_required when
 *   several sessions and nothing says which, login_required otherwise;
 * - prompt=create registers (not with an id_token_hint: a new account is never the hinted user),
 *   prompt=login signs in again, prompt=select_account shows the chooser when there is a choice;
 * - no session for the request: sign in (prefilled with the hinted user or the login hint), or the
 *   chooser when there are several and no hint;
 * - a session older than max_age asks for its password; otherwise finish.
 */
function expectedFirstPass(c: { prompt: string; sessions: Sessions; maxAge: MaxAge; idTokenHint: IdTokenHint; loginHint: LoginHint }): string {
  // A first-party client is never asked for consent: `consent` adds nothing to the other prompts.
  if (c.prompt === "consent") return expectedFirstPass({ ...c, prompt: "absent" });
  if (c.prompt === "login consent") return expectedFirstPass({ ...c, prompt: "login" });
  const hint = ID_TOKEN_HINT[c.idTokenHint];
  const loginHint = loginHintValue(c.loginHint, c.sessions);
  const usable = SESSIONS[c.sessions].filter((s) => !s.locked && (!hint || s.userId === hint));
  const prefill = (hint ? USERS[hint]!.username : loginHint) ?? "-";
  const who = hint ? usable[0] : loginHint ? usable.find((s) => s.username === loginHint.toLowerCase()) : usable.length === 1 ? usable[0] : undefined;
  const maxAge = MAX_AGE[c.maxAge];
  const stale = !!who && maxAge !== null && (NOW.getTime() - who.authTime.getTime()) / 1000 > maxAge;
  const manyUnhinted = !who && usable.length > 1 && !hint && !loginHint;

  if (c.prompt === "none") return !who ? (manyUnhinted ? "account_selection_required" : "login_required") : stale ? "login_required" : `finish ${who.label}`;
  if (c.prompt === "create" && !hint) return "register";
  if (c.prompt === "login") return `signIn ${prefill}`;
  if (c.prompt === "select_account") return usable.length ? "chooser" : `signIn ${prefill}`;
  if (!who) return manyUnhinted ? "chooser" : `signIn ${prefill}`;
  return stale ? `password ${who.label}` : `finish ${who.label}`;
}

const cases: { prompt: string; sessions: Sessions; maxAge: MaxAge; idTokenHint: IdTokenHint; loginHint: LoginHint }[] = [];
for (const prompt of Object.keys(PROMPTS))
  for (const sessions of Object.keys(SESSIONS) as Sessions[])
    for (const maxAge of Object.keys(MAX_AGE) as MaxAge[])
      for (const idTokenHint of Object.keys(ID_TOKEN_HINT) as IdTokenHint[])
        for (const loginHint of ["absent", "matches", "noMatch"] as LoginHint[]) cases.push({ prompt, sessions, maxAge, idTokenHint, loginHint });

describe("first pass: prompt × sessions × max_age × id_token_hint × login_hint", () => {
  it("covers all 720 combinations", () => {
    expect(cases).toHaveLength(7 * 4 * 4 * 3 * 3);
  });

  it.each(cases)("prompt=$prompt sessions=$sessions max_age=$maxAge id_token_hint=$idTokenHint login_hint=$loginHint", (c) => {
    const step = nextStep(
      input({
        prompt: PROMPTS[c.prompt]!,
        sessions: SESSIONS[c.sessions],
        maxAge: MAX_AGE[c.maxAge],
        hintSubject: ID_TOKEN_HINT[c.idTokenHint],
        loginHint: loginHintValue(c.loginHint, c.sessions),
      }),
    );
    expect(show(step)).toBe(expectedFirstPass(c));
    // Never an account other than the one the id_token_hint names.
    if (step.step === "finish" && ID_TOKEN_HINT[c.idTokenHint]) expect(step.account.userId).toBe(ID_TOKEN_HINT[c.idTokenHint]);
    if (step.step === "finish" || step.step === "reauthenticate") expect(step.account.locked).toBe(false);
  });
});

/** The account signed in (now) or picked (an old session) on a login page during the request. */
const CHOSEN = {
  hintedSignedIn: account("alice", ago(2_000)),
  otherSignedIn: account("bob", ago(2_000)),
  hintedPicked: account("alice", OLD),
} as const;
type Chosen = keyof typeof CHOSEN;

const secondCases: { prompt: string; maxAge: MaxAge; idTokenHint: IdTokenHint; chosen: Chosen }[] = [];
for (const prompt of ["absent", "login", "select_account", "create", "consent", "login consent"])
  for (const maxAge of Object.keys(MAX_AGE) as MaxAge[])
    for (const idTokenHint of Object.keys(ID_TOKEN_HINT) as IdTokenHint[])
      for (const chosen of Object.keys(CHOSEN) as Chosen[]) secondCases.push({ prompt, maxAge, idTokenHint, chosen });

/**
 * The callback: the chosen account finishes the request unless it is not the hinted user (sign
 * in as that user again, told why), or it signed in before the request and prompt=login or
 * max_age asks for a fresh sign-in (its password). A sign-in during the request satisfies any max_age.
 */
function expectedSecondPass(c: { prompt: string; maxAge: MaxAge; idTokenHint: IdTokenHint; chosen: Chosen }): string {
  const hint = ID_TOKEN_HINT[c.idTokenHint];
  const chosen = CHOSEN[c.chosen];
  if (hint && chosen.userId !== hint) return `signIn ${USERS[hint]!.username} (wrongAccount: ${chosen.username})`;
  const signedInNow = chosen.authTime >= CREATED;
  const maxAge = MAX_AGE[c.maxAge];
  if (!signedInNow && (PROMPTS[c.prompt]!.includes("login") || (maxAge !== null && (NOW.getTime() - chosen.authTime.getTime()) / 1000 > maxAge))) {
    return `password ${chosen.label}`;
  }
  return `finish ${chosen.label}`;
}

describe("callback: prompt × max_age × id_token_hint × the account chosen during the request", () => {
  it.each(secondCases)("prompt=$prompt max_age=$maxAge id_token_hint=$idTokenHint chosen=$chosen", (c) => {
    const chosen = CHOSEN[c.chosen];
    const sessions = c.chosen === "hintedPicked" ? [chosen, account("bob", OLD)] : [...SESSIONS.two.filter((s) => s.userId !== chosen.userId), chosen];
    const step = nextStep(input({ prompt: PROMPTS[c.prompt]!, sessions, maxAge: MAX_AGE[c.maxAge], hintSubject: ID_TOKEN_HINT[c.idTokenHint], loginHint: null, chosen }));
    expect(show(step)).toBe(expectedSecondPass(c));
  });
});

describe("the two defects (OIDC Core 3.1.2.1)", () => {
  it("id_token_hint names alice, the browser has no session, bob signs in: no code for bob, sign in as alice again", () => {
    const first = nextStep(input({ prompt: [], sessions: [], maxAge: null, hintSubject: "u-alice", loginHint: null }));
    expect(show(first)).toBe("signIn alice");
    const bob = account("bob", ago(1_000));
    const after = nextStep(input({ prompt: [], sessions: [bob], maxAge: null, hintSubject: "u-alice", loginHint: null, chosen: bob }));
    expect(show(after)).toBe("signIn alice (wrongAccount: bob)");
    // Only bob's session in the browser: still alice's sign-in, never bob's session silently.
    expect(show(nextStep(input({ prompt: [], sessions: [account("bob", OLD)], maxAge: null, hintSubject: "u-alice", loginHint: null })))).toBe("signIn alice");
    expect(show(nextStep(input({ prompt: ["none"], sessions: [account("bob", OLD)], maxAge: null, hintSubject: "u-alice", loginHint: null })))).toBe("login_required");
    expect(show(nextStep(input({ prompt: ["none"], sessions: [], maxAge: null, hintSubject: "u-alice", loginHint: null })))).toBe("login_required");
    // Then alice signs in: finished for alice.
    const alice = account("alice", ago(500));
    expect(show(nextStep(input({ prompt: [], sessions: [bob, alice], maxAge: null, hintSubject: "u-alice", loginHint: null, chosen: alice })))).toBe("finish alice");
  });

  it("max_age=0: the sign-in made during the request finishes it, however much later the callback runs", () => {
    const signedIn = account("alice", new Date(CREATED.getTime() + 200));
    for (const maxAge of [0, 1, 5]) {
      expect(show(nextStep(input({ prompt: [], sessions: [signedIn], maxAge, hintSubject: null, loginHint: null, chosen: signedIn })))).toBe("finish alice");
    }
    // The first pass with an older session asks for its password, once.
    expect(show(nextStep(input({ prompt: [], sessions: [account("alice", OLD)], maxAge: 0, hintSubject: null, loginHint: null })))).toBe("password alice");
  });

  it("max_age compares whole seconds, as auth_time does", () => {
    // auth_time 11:59:59 (…59.100), now 12:00:00 (…00.500): one second in OIDC's terms, 1.4 s in milliseconds.
    const s = account("alice", new Date("2026-11-23T11:59:59.100Z"));
    const at = (now: string) => ({ ...input({ prompt: [], sessions: [s], maxAge: 1, hintSubject: null, loginHint: null }), now: new Date(now) });
    const later = (i: PolicyInput<Acc>) => ({ ...i, request: { ...i.request, createdAt: new Date("2026-11-23T12:00:00.000Z") } });
    expect(show(nextStep(later(at("2026-11-23T12:00:00.500Z"))))).toBe("finish alice");
    expect(show(nextStep(later(at("2026-11-23T12:00:01.000Z"))))).toBe("password alice");
    // A sign-in in the same second as the request, even a few milliseconds before it, counts as made during it.
    const same = account("alice", new Date(CREATED.getTime() - (CREATED.getTime() % 1000)));
    expect(show(nextStep(input({ prompt: ["login"], sessions: [same], maxAge: 0, hintSubject: null, loginHint: null, chosen: same })))).toBe("finish alice");
  });
});

describe("more rows, written out", () => {
  const row = (o: Partial<Parameters<typeof input>[0]>) => show(nextStep(input({ prompt: [], sessions: [], maxAge: null, hintSubject: null, loginHint: null, ...o })));

  it("the login hint may name the user as username@primaryDomain", () => {
    expect(row({ sessions: SESSIONS.two, loginHint: "bob@EXAMPLE.com" })).toBe("finish bob");
    expect(row({ sessions: SESSIONS.two, loginHint: "bob@other.example" })).toBe("signIn bob@other.example");
  });

  it("an id_token_hint wins over a login hint naming another session", () => {
    expect(row({ sessions: SESSIONS.two, hintSubject: "u-alice", loginHint: "bob" })).toBe("finish alice");
  });

  it("an id_token_hint naming a deleted or locked user cannot be satisfied: login_required for the client", () => {
    expect(row({ hintSubject: "u-gone" })).toBe("login_required");
    expect(row({ sessions: SESSIONS.lockedUser, hintSubject: "u-lena" })).toBe("login_required");
  });

  it("prompt=create with an id_token_hint signs the hinted user in instead", () => {
    expect(row({ prompt: ["create"], sessions: SESSIONS.one, hintSubject: "u-alice" })).toBe("finish alice");
    expect(row({ prompt: ["create"], hintSubject: "u-alice" })).toBe("signIn alice");
  });

  it("prompt=login with a session picked before the request asks for that account's password", () => {
    const picked = account("bob", OLD);
    expect(row({ prompt: ["login"], sessions: [picked], chosen: picked })).toBe("password bob");
  });

  it("a chosen session of a user locked meanwhile does not count", () => {
    const locked = account("alice", ago(1_000), true);
    expect(row({ sessions: [locked], chosen: locked })).toBe("signIn -");
    expect(row({ sessions: [locked, account("bob", OLD)], chosen: locked })).toBe("signIn -");
  });
});

describe("the account chooser", () => {
  it("lists the login hint's account first and says which accounts finish at once", () => {
    const fresh = account("carol", ago(30_000));
    const entries = chooserEntries(input({ prompt: ["select_account"], sessions: [...SESSIONS.two, fresh], maxAge: 120, hintSubject: null, loginHint: "bob" }));
    expect(entries.map((e) => [e.account.label, e.hinted, e.ready])).toEqual([
      ["bob", true, false],
      ["alice", false, false],
      ["carol", false, true],
    ]);
  });

  it("offers only the hinted user's session, and no locked user's", () => {
    const sessions = [...SESSIONS.two, ...SESSIONS.lockedUser];
    expect(chooserEntries(input({ prompt: ["select_account"], sessions, maxAge: null, hintSubject: "u-alice", loginHint: null })).map((e) => e.account.label)).toEqual(["alice"]);
    expect(chooserEntries(input({ prompt: ["select_account"], sessions, maxAge: null, hintSubject: null, loginHint: null })).map((e) => e.account.label)).toEqual(["alice", "bob"]);
  });

  it("with prompt=login no account finishes without a new sign-in", () => {
    expect(chooserEntries(input({ prompt: ["login"], sessions: SESSIONS.two, maxAge: null, hintSubject: null, loginHint: null })).every((e) => !e.ready)).toBe(true);
  });
});

describe("registration", () => {
  it("is offered unless an id_token_hint names a user", () => {
    expect(offersRegistration({ hintSubject: null })).toBe(true);
    expect(offersRegistration({ hintSubject: "u-alice" })).toBe(false);
  });
});

describe("consent (third-party clients)", () => {
  const SCOPES = ["openid", "profile"];
  const withConsent = (
    o: Parameters<typeof input>[0],
    consent: { given?: Record<string, ConsentSet & { grantedAt: Date }>; denied?: boolean; asked?: ConsentSet } | null,
  ): PolicyInput<Acc> => ({
    ...input(o),
    consent: consent ? { asked: consent.asked ?? { scopes: SCOPES, apis: {} }, denied: consent.denied ?? false, given: consent.given ?? {} } : null,
  });
  const base = { prompt: [] as Prompt[], sessions: SESSIONS.one, maxAge: null, hintSubject: null, loginHint: null };
  const given = (scopes: string[], at = OLD, apis: Record<string, string[]> = {}) => ({ "u-alice": { scopes, apis, grantedAt: at } });

  it("a first-party client never asks; a third-party one asks once per new scope and finishes after", () => {
    expect(show(nextStep(withConsent(base, null)))).toBe("finish alice");
    // Not even with prompt=consent (README, "Consent"): the provider decides for its own apps.
    expect(show(nextStep(withConsent({ ...base, prompt: ["consent"] }, null)))).toBe("finish alice");
    expect(show(nextStep(withConsent(base, {})))).toBe("consent alice");
    expect(show(nextStep(withConsent(base, { given: given(["openid", "profile", "email"]) })))).toBe("finish alice");
    // A scope never allowed asks again; fewer scopes than allowed do not.
    expect(show(nextStep(withConsent(base, { given: given(["openid"]) })))).toBe("consent alice");
    expect(show(nextStep(withConsent(base, { given: given(["openid", "profile"]), asked: { scopes: ["openid"], apis: {} } })))).toBe("finish alice");
  });

  it("remembers API scopes per API: a new API or a new scope of an API asks again, the same name at another API does not count", () => {
    const ORDERS = "https://orders.example";
    const FILES = "https://files.example";
    const allowed = given(SCOPES, OLD, { [ORDERS]: ["read"] });
    const ask = (apis: Record<string, string[]>) => withConsent(base, { given: allowed, asked: { scopes: SCOPES, apis } });
    expect(show(nextStep(ask({ [ORDERS]: ["read"] })))).toBe("finish alice");
    expect(show(nextStep(ask({ [ORDERS]: [] })))).toBe("finish alice");
    expect(show(nextStep(ask({ [ORDERS]: ["read", "write"] })))).toBe("consent alice");
    expect(show(nextStep(ask({ [FILES]: [] })))).toBe("consent alice");
    expect(show(nextStep(ask({ [FILES]: ["read"] })))).toBe("consent alice");
    expect(show(nextStep(withConsent({ ...base, prompt: ["none"] }, { given: allowed, asked: { scopes: SCOPES, apis: { [FILES]: [] } } })))).toBe("consent_required");
  });

  it("prompt=none without consent is consent_required; a refusal is access_denied; prompt=consent asks even when allowed before", () => {
    expect(show(nextStep(withConsent({ ...base, prompt: ["none"] }, {})))).toBe("consent_required");
    expect(show(nextStep(withConsent(base, { denied: true, given: given(SCOPES) })))).toBe("access_denied");
    expect(show(nextStep(withConsent({ ...base, prompt: ["consent"] }, { given: given(SCOPES) })))).toBe("consent alice");
    // ...and is satisfied by a consent given during this request.
    expect(show(nextStep(withConsent({ ...base, prompt: ["consent"] }, { given: given(SCOPES, NOW) })))).toBe("finish alice");
    // A consent given a moment before this request (same second) does not count for it.
    expect(show(nextStep(withConsent({ ...base, prompt: ["consent"] }, { given: given(SCOPES, new Date(CREATED.getTime() - 1)) })))).toBe("consent alice");
  });

  it("comes after the sign-in: no session means the login page first, whatever the consent", () => {
    expect(show(nextStep(withConsent({ ...base, sessions: SESSIONS.none }, {})))).toBe("signIn -");
    expect(show(nextStep(withConsent({ ...base, maxAge: 60 }, {})))).toBe("password alice");
  });

  it("the chooser counts an account whose next step is the consent screen as ready", () => {
    const entries = chooserEntries(withConsent({ ...base, sessions: SESSIONS.two }, {}));
    expect(entries.map((e) => [e.account.label, e.ready])).toEqual([
      ["alice", true],
      ["bob", true],
    ]);
  });
});

describe("consent prompts of a third-party client: prompt × consent given × first pass or callback", () => {
  const CONSENT_PROMPTS: Record<string, Prompt[]> = {
    absent: [],
    none: ["none"],
    consent: ["consent"],
    "login consent": ["login", "consent"],
    "select_account consent": ["select_account", "consent"],
  };
  /** alice allowed the scopes never, before this request, or on its consent screen. */
  const GIVEN = { never: null, beforeRequest: OLD, duringRequest: ago(1_000) } as const;
  type Given = keyof typeof GIVEN;
  const rows: { prompt: string; given: Given; pass: "first" | "callback" }[] = [];
  for (const prompt of Object.keys(CONSENT_PROMPTS))
    for (const given of Object.keys(GIVEN) as Given[]) for (const pass of ["first", "callback"] as const) rows.push({ prompt, given, pass });

  /**
   * Who signs in comes first: on the first pass `login` signs in again and `select_account` shows
   * the chooser; on the callback alice has just signed in (or picked her account). Then consent:
   * asked when never given, and with prompt=consent unless given during this request; prompt=none
   * gets consent_required instead of the screen.
   */
  function expected(r: (typeof rows)[number]): string {
    const prompt = CONSENT_PROMPTS[r.prompt]!;
    if (r.pass === "first" && prompt.includes("login")) return "signIn -";
    if (r.pass === "first" && prompt.includes("select_account")) return "chooser";
    const asks = r.given === "never" || (prompt.includes("consent") && r.given !== "duringRequest");
    if (!asks) return "finish alice";
    return prompt.includes("none") ? "consent_required" : "consent alice";
  }

  it("covers all 30 combinations", () => {
    expect(rows).toHaveLength(30);
  });

  it.each(rows)("prompt=$prompt consent=$given pass=$pass", (r) => {
    const alice = r.pass === "first" ? account("alice", OLD) : account("alice", ago(2_000));
    const at = GIVEN[r.given];
    const base = input({ prompt: CONSENT_PROMPTS[r.prompt]!, sessions: [alice], maxAge: null, hintSubject: null, loginHint: null, chosen: r.pass === "callback" ? alice : null });
    const given: Record<string, { scopes: string[]; apis: Record<string, string[]>; grantedAt: Date }> = at ? { "u-alice": { scopes: ["openid", "profile"], apis: {}, grantedAt: at } } : {};
    const consent = { asked: { scopes: ["openid", "profile"], apis: {} }, denied: false, given };
    expect(show(nextStep({ ...base, consent }))).toBe(expected(r));
  });
});

describe("email verification (the account prompt)", () => {
  const unverified = { ...account("alice", OLD), emailUnverified: true };
  const base = { prompt: [] as Prompt[], sessions: [unverified], maxAge: null, hintSubject: null, loginHint: null };

  it("required: an unverified address asks for the code before the request finishes; prompt=none is interaction_required", () => {
    expect(show(nextStep({ ...input(base), requireVerifiedEmail: true }))).toBe("verifyEmail alice");
    expect(show(nextStep({ ...input({ ...base, prompt: ["none"] }), requireVerifiedEmail: true }))).toBe("interaction_required");
    // Verified, or no address at all: nothing to ask.
    expect(show(nextStep({ ...input({ ...base, sessions: [account("alice", OLD)] }), requireVerifiedEmail: true }))).toBe("finish alice");
  });

  it("optional or off: the sign-in finishes whatever the address", () => {
    expect(show(nextStep({ ...input(base), requireVerifiedEmail: false }))).toBe("finish alice");
    expect(show(nextStep(input(base)))).toBe("finish alice");
  });

  it("comes after the sign-in and before the consent screen", () => {
    expect(show(nextStep({ ...input({ ...base, sessions: [] }), requireVerifiedEmail: true }))).toBe("signIn -");
    const consent = { asked: { scopes: ["openid"], apis: {} }, denied: false, given: {} };
    expect(show(nextStep({ ...input(base), requireVerifiedEmail: true, consent }))).toBe("verifyEmail alice");
    expect(show(nextStep({ ...input({ ...base, sessions: [account("alice", OLD)] }), requireVerifiedEmail: true, consent }))).toBe("consent alice");
  });
});

describe("second factors (the account prompt): mfa policy × enrolled × session amr × acr_values × prompt", () => {
  const MFA = ["off", "optional", "required"] as const;
  const ACRS: Record<string, string[]> = {
    absent: [],
    mfaFirst: [ACR.multiFactor, ACR.password],
    passwordFirst: [ACR.password, ACR.multiFactor],
    unknownThenMfa: ["urn:other:gold", ACR.multiFactor],
  };
  const rows: { mfa: (typeof MFA)[number]; enrolled: boolean; amr: "pwd" | "mfa"; acr: string; prompt: "absent" | "none" }[] = [];
  for (const mfa of MFA)
    for (const enrolled of [false, true])
      for (const amr of ["pwd", "mfa"] as const)
        for (const acr of Object.keys(ACRS)) for (const prompt of ["absent", "none"] as const) rows.push({ mfa, enrolled, amr, acr, prompt });

  /**
   * Off never asks. Otherwise a session without `mfa` in its amr is asked for a factor when the
   * user has one, when the instance requires one, or when the client's preferred class is
   * multi-factor; a user who has none enrols one. prompt=none: interaction_required.
   */
  function expected(r: (typeof rows)[number]): string {
    const needed = r.mfa !== "off" && r.amr !== "mfa" && (r.enrolled || r.mfa === "required" || r.acr === "mfaFirst" || r.acr === "unknownThenMfa");
    if (!needed) return "finish alice";
    if (r.prompt === "none") return "interaction_required";
    return r.enrolled ? "secondFactor alice" : "enrolFactor alice";
  }

  it("covers all 96 combinations", () => {
    expect(rows).toHaveLength(96);
  });

  it.each(rows)("mfa=$mfa enrolled=$enrolled amr=$amr acr_values=$acr prompt=$prompt", (r) => {
    const session = { ...account("alice", OLD), amr: r.amr === "mfa" ? ["pwd", "otp", "mfa"] : ["pwd"], hasSecondFactor: r.enrolled };
    const base = input({ prompt: r.prompt === "none" ? ["none"] : [], sessions: [session], maxAge: null, hintSubject: null, loginHint: null });
    const step = nextStep({ ...base, request: { ...base.request, acrValues: ACRS[r.acr] }, mfa: r.mfa });
    expect(show(step)).toBe(expected(r));
  });

  it("comes after the sign-in (a stale session asks for its password first) and before the address code and consent", () => {
    const session = { ...account("alice", OLD), amr: ["pwd"], hasSecondFactor: true, emailUnverified: true };
    const base = input({ prompt: [], sessions: [session], maxAge: 60, hintSubject: null, loginHint: null });
    expect(show(nextStep({ ...base, mfa: "optional" }))).toBe("password alice");
    const fresh = input({ prompt: [], sessions: [session], maxAge: null, hintSubject: null, loginHint: null });
    const consent = { asked: { scopes: ["openid"], apis: {} }, denied: false, given: {} };
    expect(show(nextStep({ ...fresh, mfa: "optional", requireVerifiedEmail: true, consent }))).toBe("secondFactor alice");
    const done = { ...session, amr: ["pwd", "otp", "mfa"] };
    expect(show(nextStep({ ...fresh, sessions: [done], mfa: "optional", requireVerifiedEmail: true, consent }))).toBe("verifyEmail alice");
  });

  it("the chooser counts an account whose next step is its second factor as ready (no password again)", () => {
    const session = { ...account("alice", OLD), amr: ["pwd"], hasSecondFactor: true };
    const entries = chooserEntries({ ...input({ prompt: [], sessions: [session], maxAge: null, hintSubject: null, loginHint: null }), mfa: "optional" });
    expect(entries.map((e) => e.ready)).toEqual([true]);
  });
});

describe("password change (the account prompt): what made it due × when × how the session signed in × prompt", () => {
  const DAY = 86_400_000;
  /** The session signed in 5 minutes ago; the password became due a minute before that, or a minute after. */
  const WHEN = { beforeSignIn: new Date(OLD.getTime() - 60_000), afterSignIn: new Date(OLD.getTime() + 60_000) } as const;
  type When = keyof typeof WHEN;
  /**
   * `required`: an administrator's demand since that moment; `expired`: the password's age reached
   * the 30 days the settings allow at that moment; `ageOff`: a 1000-day-old password, no limit set;
   * `nothing`: a fresh password, no demand.
   */
  const DUE = ["nothing", "required", "expired", "ageOff"] as const;
  const AMR = { pwd: ["pwd"], pwdAndFactor: ["pwd", "otp", "mfa"], passkey: ["hwk", "mfa"] } as const;
  type Amr = keyof typeof AMR;
  const rows: { due: (typeof DUE)[number]; when: When; amr: Amr; prompt: "absent" | "none" }[] = [];
  for (const due of DUE)
    for (const when of Object.keys(WHEN) as When[])
      for (const amr of Object.keys(AMR) as Amr[]) for (const prompt of ["absent", "none"] as const) rows.push({ due, when, amr, prompt });

  function session(r: Pick<(typeof rows)[number], "due" | "when" | "amr">): Acc {
    const at = WHEN[r.when];
    return {
      ...account("alice", OLD),
      amr: AMR[r.amr],
      passwordChangedAt: r.due === "expired" ? new Date(at.getTime() - 30 * DAY) : r.due === "ageOff" ? new Date(NOW.getTime() - 1000 * DAY) : ago(3_600_000),
      passwordChangeRequiredSince: r.due === "required" ? at : null,
    };
  }
  const withAge = (r: Pick<(typeof rows)[number], "due">) => (r.due === "expired" ? 30 : 0);

  /**
   * Asked only of a session that signed in with the password after it became due (demanded or too
   * old): a session from before goes on (single sign-on, prompt=none), and a passkey sign-in uses
   * no password. prompt=none: interaction_required.
   */
  function expected(r: (typeof rows)[number]): string {
    const asks = (r.due === "required" || r.due === "expired") && r.when === "beforeSignIn" && r.amr !== "passkey";
    if (!asks) return "finish alice";
    return r.prompt === "none" ? "interaction_required" : "changePassword alice";
  }

  it("covers all 48 combinations", () => {
    expect(rows).toHaveLength(48);
  });

  it.each(rows)("due=$due since=$when amr=$amr prompt=$prompt", (r) => {
    const base = input({ prompt: r.prompt === "none" ? ["none"] : [], sessions: [session(r)], maxAge: null, hintSubject: null, loginHint: null });
    expect(show(nextStep({ ...base, passwordMaxAgeDays: withAge(r) }))).toBe(expected(r));
  });

  it("a sign-in exactly at the moment the password became due asks; a millisecond before does not", () => {
    const since = OLD;
    const at = (authTime: Date) => ({ ...account("alice", authTime), amr: ["pwd"], passwordChangeRequiredSince: since });
    const row = (authTime: Date) => show(nextStep(input({ prompt: [], sessions: [at(authTime)], maxAge: null, hintSubject: null, loginHint: null })));
    expect(row(since)).toBe("changePassword alice");
    expect(row(new Date(since.getTime() - 1))).toBe("finish alice");
  });

  it("a new password ends it: no demand, and its age counts from now", () => {
    const changed = { ...account("alice", ago(2_000)), amr: ["pwd"], passwordChangedAt: ago(1_000), passwordChangeRequiredSince: null };
    expect(show(nextStep({ ...input({ prompt: [], sessions: [changed], maxAge: null, hintSubject: null, loginHint: null }), passwordMaxAgeDays: 1 }))).toBe("finish alice");
  });

  it("comes after the password and the second factor, before the address code and consent", () => {
    const due = { ...account("alice", OLD), amr: ["pwd"], hasSecondFactor: true, emailUnverified: true, passwordChangeRequiredSince: ago(3_600_000) };
    const consent = { asked: { scopes: ["openid"], apis: {} }, denied: false, given: {} };
    // A stale session: its password again first (prompt=login likewise).
    expect(show(nextStep(input({ prompt: [], sessions: [due], maxAge: 60, hintSubject: null, loginHint: null })))).toBe("password alice");
    expect(show(nextStep(input({ prompt: ["login"], sessions: [due], maxAge: null, hintSubject: null, loginHint: null, chosen: due })))).toBe("password alice");
    const fresh = input({ prompt: [], sessions: [due], maxAge: null, hintSubject: null, loginHint: null });
    expect(show(nextStep({ ...fresh, mfa: "optional", requireVerifiedEmail: true, consent }))).toBe("secondFactor alice");
    const factorDone = { ...due, amr: ["pwd", "otp", "mfa"] };
    expect(show(nextStep({ ...fresh, sessions: [factorDone], mfa: "optional", requireVerifiedEmail: true, consent }))).toBe("changePassword alice");
    const changed = { ...factorDone, passwordChangeRequiredSince: null };
    expect(show(nextStep({ ...fresh, sessions: [changed], mfa: "optional", requireVerifiedEmail: true, consent }))).toBe("verifyEmail alice");
  });

  it("after prompt=login the new sign-in with a due password asks for the change", () => {
    const signedIn = { ...account("alice", ago(2_000)), amr: ["pwd"], passwordChangeRequiredSince: OLD };
    const step = nextStep(input({ prompt: ["login"], sessions: [signedIn], maxAge: null, hintSubject: null, loginHint: null, chosen: signedIn }));
    expect(show(step)).toBe("changePassword alice");
  });

  it("the chooser counts an account whose next step is the change as ready (its session exists)", () => {
    const due = { ...account("alice", OLD), amr: ["pwd"], passwordChangeRequiredSince: ago(3_600_000) };
    expect(chooserEntries(input({ prompt: [], sessions: [due], maxAge: null, hintSubject: null, loginHint: null })).map((e) => e.ready)).toEqual([true]);
  });
});
