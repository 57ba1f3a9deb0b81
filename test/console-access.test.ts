import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encrypt } from "@/lib/crypto";
import { CONSOLE_CLIENT_ID, ensureConsoleClient } from "@/lib/console/client";
import { apiBody, byApiChecks, clientBody, fieldErrors, nestedNumbers, userBody, type ConsoleT } from "@/lib/console/forms";
import {
  CONSOLE_COOKIE,
  consoleAccess,
  consoleCsrfToken,
  finishSignIn,
  safeReturnTo,
  startSignIn,
  verifyConsoleCsrf,
} from "@/lib/console/session";
import { dispatchManagement } from "@/lib/management/router";
import { getClient } from "@/lib/store/clients";
import { createUserAgent, endSessions, recordAuthentication } from "@/lib/store/sessions";
import { insertUser, updateUser, type User } from "@/lib/store/users";
import { createTranslator } from "next-intl";
import de from "@/messages/de.json";
import en from "@/messages/en.json";
import fr from "@/messages/fr.json";
import it_ from "@/messages/it.json";
import { startTestInstance, type TestInstance } from "./harness";

const CATALOGS = { en, de, fr, it: it_ };
const translator = (locale: keyof typeof CATALOGS) =>
  createTranslator({ locale, messages: CATALOGS[locale], namespace: "console" }) as unknown as ConsoleT;

let t: TestInstance;
let admin: User;
let plain: User;
beforeAll(async () => {
  t = await startTestInstance();
  admin = await insertUser(t.inst.db, { type: "human", username: "console-admin", roles: ["admin"] });
  plain = await insertUser(t.inst.db, { type: "human", username: "console-plain", roles: [] });
});
afterAll(() => t.close());

const LIFETIMES = { sessionIdle: 3600, sessionAbsolute: 7200 };

/** A browser with a live login session of `user`, and a console cookie sealed for it. */
async function browserOf(user: User) {
  const ua = await createUserAgent(t.inst.db);
  const session = await recordAuthentication(t.inst.db, { userAgentId: ua.id, userId: user.id, amr: ["pwd"], lifetimes: LIFETIMES, now: new Date(), from: {} });
  const sealed = encrypt(t.inst.masterKey, JSON.stringify({ uid: user.id, sid: session.id, exp: Date.now() + 60_000 }), "torii-console-session");
  return { ua, session, cookies: { console: sealed, userAgent: ua.cookie } };
}

describe("console access, checked on every request", () => {
  it("grants an administrator with a live session in this browser, with a CSRF token bound to both", async () => {
    const b = await browserOf(admin);
    const access = await consoleAccess(t.inst, b.cookies);
    expect(access.status).toBe("admin");
    if (access.status !== "admin") return;
    expect(access.user.id).toBe(admin.id);
    expect(verifyConsoleCsrf(t.inst.masterKey, b.ua.id, b.session.id, access.csrf)).toBe(true);
    expect(verifyConsoleCsrf(t.inst.masterKey, b.ua.id, b.session.id, "forged")).toBe(false);
    expect(verifyConsoleCsrf(t.inst.masterKey, b.ua.id, b.session.id, undefined)).toBe(false);
    // A token from another browser's console session does not fit this one.
    const other = await browserOf(admin);
    expect(verifyConsoleCsrf(t.inst.masterKey, b.ua.id, b.session.id, consoleCsrfToken(t.inst.masterKey, other.ua.id, other.session.id))).toBe(false);
  });

  it("denies a signed-in user without the admin role", async () => {
    const b = await browserOf(plain);
    expect((await consoleAccess(t.inst, b.cookies)).status).toBe("denied");
  });

  it("ends when the login session ends, the role is removed, the user is locked, or the cookie moves to another browser", async () => {
    const b = await browserOf(admin);
    // The console cookie alone is not enough: it must come with the browser that holds the session.
    const stranger = await createUserAgent(t.inst.db);
    expect((await consoleAccess(t.inst, { console: b.cookies.console, userAgent: stranger.cookie })).status).toBe("none");
    expect((await consoleAccess(t.inst, { console: b.cookies.console })).status).toBe("none");
    expect((await consoleAccess(t.inst, { console: "garbage", userAgent: b.ua.cookie })).status).toBe("none");

    const second = await insertUser(t.inst.db, { type: "human", username: "console-admin-2", roles: ["admin"] });
    const b2 = await browserOf(second);
    await updateUser(t.inst.db, second.id, { roles: [] }, new Date());
    expect((await consoleAccess(t.inst, b2.cookies)).status).toBe("denied");
    await updateUser(t.inst.db, second.id, { roles: ["admin"], locked: true }, new Date());
    expect((await consoleAccess(t.inst, b2.cookies)).status).toBe("none");

    await endSessions(t.inst.db, b.ua.id, [b.session.id], new Date());
    expect((await consoleAccess(t.inst, b.cookies)).status).toBe("none");
  });

  it("refuses an expired console cookie", async () => {
    const b = await browserOf(admin);
    const expired = encrypt(t.inst.masterKey, JSON.stringify({ uid: admin.id, sid: b.session.id, exp: Date.now() - 1 }), "torii-console-session");
    expect((await consoleAccess(t.inst, { console: expired, userAgent: b.ua.cookie })).status).toBe("none");
  });
});

describe("console sign-in", () => {
  it("registers the built-in public PKCE client idempotently and starts a code flow with S256", async () => {
    const { location, setCookie } = await startSignIn(t.inst, { returnTo: "/ui/console/users" });
    const url = new URL(location);
    expect(url.pathname).toBe("/oauth/v2/authorize");
    expect(url.searchParams.get("client_id")).toBe(CONSOLE_CLIENT_ID);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("redirect_uri")).toBe(`${t.issuer}/ui/console/callback`);
    expect(setCookie).toMatch(/HttpOnly/);
    const client = await getClient(t.inst, CONSOLE_CLIENT_ID);
    expect(client).toMatchObject({ authMethod: "none", redirectUris: [`${t.issuer}/ui/console/callback`] });
    await ensureConsoleClient(t.inst);
  });

  it("refuses a callback without the pending sign-in of this browser or with another state", async () => {
    const { setCookie } = await startSignIn(t.inst, {});
    const login = decodeURIComponent(/=([^;]+)/.exec(setCookie)![1]!);
    expect(await finishSignIn(t.inst, new URLSearchParams({ code: "x", state: "y" }), {}, "127.0.0.1")).toMatchObject({ ok: false, reason: "no_pending" });
    expect(await finishSignIn(t.inst, new URLSearchParams({ code: "x", state: "y" }), { login }, "127.0.0.1")).toMatchObject({ ok: false, reason: "state" });
  });

  it("only returns to console paths", () => {
    expect(safeReturnTo("/ui/console/users?q=a")).toBe("/ui/console/users?q=a");
    expect(safeReturnTo("https://evil.example/ui/console")).toBe("/ui/console");
    expect(safeReturnTo("//evil.example")).toBe("/ui/console");
    expect(safeReturnTo("/ui/consoleevil")).toBe("/ui/console");
    expect(safeReturnTo("/ui/login")).toBe("/ui/console");
    expect(safeReturnTo(null)).toBe("/ui/console");
    expect(CONSOLE_COOKIE).toBe("torii_console");
  });
});

describe("dispatchManagement: the console's path into the management API", () => {
  it("runs the API's own routes, validation and audit for an administrator", async () => {
    const req = (method: string, path: string, body?: unknown) =>
      new Request(`${t.issuer}/management/v1${path}`, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
    const bad = await dispatchManagement(t.inst, req("POST", "/clients", { name: "" }), admin);
    expect(bad.status).toBe(400);
    expect((await bad.json()).fields[0].path).toBe("name");
    const ok = await dispatchManagement(t.inst, req("POST", "/clients", { name: "Via console", redirectUris: ["https://a.example/cb"] }), admin);
    expect(ok.status).toBe(201);
    const audit = await (await t.api("/management/v1/audit?action=client.created")).json();
    expect(audit.events[0].actorId).toBe(admin.id);
  });

  it("refuses a user without the admin role", async () => {
    const res = await dispatchManagement(t.inst, new Request(`${t.issuer}/management/v1/clients`), plain);
    expect(res.status).toBe(403);
  });
});

describe("form conversion", () => {
  const form = (entries: [string, string][]) => {
    const f = new FormData();
    for (const [k, v] of entries) f.append(k, v);
    return f;
  };

  it("turns the application form into the API body", () => {
    const p = clientBody(
      form([
        ["name", "Shop"],
        ["redirectUris", "https://a.example/cb\n\n https://b.example/cb \n"],
        ["responseTypes", "code"],
        ["grantTypes", "authorization_code"],
        ["grantTypes", "refresh_token"],
        ["authMethod", "none"],
        ["jwks", ""],
        ["accessTokenType", "jwt"],
        ["idTokenUserinfoAssertion", "on"],
        ["accessTokenLifetime", "600"],
        ["idTokenLifetime", ""],
        ["refreshTokenLifetime", "1.5"],
      ]),
      "create",
    );
    expect(p.fields).toEqual([]);
    expect(p.body).toEqual({
      name: "Shop",
      redirectUris: ["https://a.example/cb", "https://b.example/cb"],
      postLogoutRedirectUris: [],
      responseTypes: ["code"],
      grantTypes: ["authorization_code", "refresh_token"],
      authMethod: "none",
      accessTokenType: "jwt",
      idTokenUserinfoAssertion: true,
      accessTokenLifetime: 600,
      // Not a whole number: passed on for the API to refuse with its own message.
      refreshTokenLifetime: "1.5",
      // No origins listed: those of the redirect URIs (null); an unchecked box is third-party.
      allowedOrigins: null,
      firstParty: false,
    });
    expect(clientBody(form([["allowedOrigins", " https://spa.example \n\nhttp://localhost:5173"], ["firstParty", "on"]]), "update").body).toMatchObject({
      allowedOrigins: ["https://spa.example", "http://localhost:5173"],
      firstParty: true,
    });
    // The web origins choice: the redirect URIs' origins (null), none ([]), or exactly the list.
    const origins = (mode: string, list = "https://spa.example") => clientBody(form([["originsMode", mode], ["allowedOrigins", list]]), "update").body.allowedOrigins;
    expect(origins("default")).toBeNull();
    expect(origins("none")).toEqual([]);
    expect(origins("list")).toEqual(["https://spa.example"]);
    expect(origins("list", "")).toEqual([]);
    expect(clientBody(form([["jwks", "{nope"]]), "create").fields).toEqual([{ path: "jwks", code: "invalid_json", message: "Must be valid JSON." }]);
    expect(clientBody(form([["jwks", ""]]), "update").body.jwks).toBeNull();
  });

  it("turns the API form into the API body, keeping per-locale scope descriptions the form does not show", () => {
    const f = form([
      ["identifier", " https://api.example/orders "],
      ["name", "Orders"],
      ["scopes", "orders:read | Read your orders\n\norders:write"],
      ["roles", "viewer | Viewer\nadmin | Administrator | Everything | really\nbare"],
      ["accessTokenType", "opaque"],
      ["accessTokenLifetime", "300"],
    ]);
    expect(apiBody(f, "create").body).toEqual({
      identifier: "https://api.example/orders",
      name: "Orders",
      scopes: [
        { name: "orders:read", description: "Read your orders" },
        { name: "orders:write", description: "" },
      ],
      roles: [
        { key: "viewer", name: "Viewer", description: "" },
        { key: "admin", name: "Administrator", description: "Everything | really" },
        { key: "bare", name: "bare", description: "" },
      ],
      accessTokenType: "opaque",
      accessTokenLifetime: 300,
    });
    const update = apiBody(f, "update", { scopes: [{ name: "orders:read", descriptions: { de: "Bestellungen lesen" } }] }).body;
    expect("identifier" in update).toBe(false);
    expect((update.scopes as unknown[])[0]).toEqual({ name: "orders:read", description: "Read your orders", descriptions: { de: "Bestellungen lesen" } });
    // The API page's per-language fields replace the texts; emptied ones go (the default applies).
    const edited = form([
      ["name", "Orders"],
      ["scopes", "orders:read | Read your orders\norders:write"],
      ["scopeText en orders:read", ""],
      ["scopeText de orders:read", ""],
      ["scopeText fr orders:read", " Lire vos commandes "],
      ["scopeText it orders:read", "Leggere i tuoi ordini"],
      ["scopeText en orders:write", ""],
      ["scopeText de orders:write", ""],
      ["scopeText fr orders:write", ""],
      ["scopeText it orders:write", ""],
    ]);
    expect(apiBody(edited, "update", { scopes: [{ name: "orders:read", descriptions: { de: "Bestellungen lesen" } }] }).body.scopes).toEqual([
      { name: "orders:read", description: "Read your orders", descriptions: { fr: "Lire vos commandes", it: "Leggere i tuoi ordini" } },
      { name: "orders:write", description: "" },
    ]);
  });

  it("turns per-API check boxes into {apiIdentifier: keys}; an API shown with nothing ticked is []", () => {
    const f = form([
      ["apiRoles", "https://a.example viewer"],
      ["apiRoles", "https://a.example admin"],
      ["apiRoles", "https://c.example"],
    ]);
    expect(byApiChecks(f, "apiRoles", ["https://a.example", "https://b.example"])).toEqual({ "https://a.example": ["viewer", "admin"], "https://b.example": [], "https://c.example": [] });
  });

  it("turns the user form into the API body, empty fields as null", () => {
    const p = userBody(form([["username", " ann "], ["email", ""], ["givenName", "Ann"], ["address.country", "CH"], ["roles", "admin"]]), "human", "create");
    expect(p.body).toMatchObject({ type: "human", username: "ann", email: null, givenName: "Ann", address: { country: "CH", locality: null }, roles: ["admin"], emailVerified: false });
  });

  it("reads nested settings with the last check box value winning", () => {
    const p = nestedNumbers(form([["lockoutPolicy.freeFailures", "5"], ["passwordPolicy.requireNumber", "false"], ["passwordPolicy.requireNumber", "true"], ["other", "x"]]), ["lockoutPolicy", "passwordPolicy"]);
    expect(p.body).toEqual({ lockoutPolicy: { freeFailures: 5 }, passwordPolicy: { requireNumber: true } });
  });

  it("maps the API's field paths onto input names, in the console's language", () => {
    const fields = [
      { path: "redirectUris.1", code: "redirect_uri_fragment", message: "Redirect URI must not contain a fragment (#)." },
      { path: "name", code: "required", message: "Too small." },
      { path: "accessTokenLifetime", code: "too_big", message: "Too big.", params: { maximum: 604800 } },
      { path: "", code: "some_future_code", message: "Whole." },
    ];
    const inputs = ["name", "redirectUris", "accessTokenLifetime"];
    expect(fieldErrors(fields, inputs, translator("en"))).toEqual({
      redirectUris: "The URI must not contain a fragment (#). (line 2)",
      name: "Required.",
      accessTokenLifetime: "Must be at most 604800.",
      "": "Whole.",
    });
    // A field of a list item (a scope's name on its line) says the line too.
    const scopes = [
      { path: "scopes.0.name", message: "A scope name is 1 to 100 printable characters." },
      { path: "scopes.2.name", message: "A scope name is 1 to 100 printable characters." },
    ];
    expect(fieldErrors(scopes, ["scopes"], translator("en"))).toEqual({
      scopes: "A scope name is 1 to 100 printable characters. (line 1) A scope name is 1 to 100 printable characters. (line 3)",
    });
    expect(fieldErrors(fields, inputs, translator("de"))).toEqual({
      redirectUris: "Die URI darf kein Fragment (#) enthalten. (Zeile 2)",
      name: "Pflichtfeld.",
      accessTokenLifetime: "Darf höchstens 604800 sein.",
      // A code the console has no text for: the API's message.
      "": "Whole.",
    });
  });

  it("has a text for every error code in every language, and each formats", () => {
    const codes = Object.keys(en.console.apiErrors);
    for (const locale of ["en", "de", "fr", "it"] as const) {
      const t = translator(locale);
      for (const code of codes) {
        expect(t.has(`apiErrors.${code}`), `${locale} ${code}`).toBe(true);
        const text = t(`apiErrors.${code}`, { minimum: 1, maximum: 2, values: "a, b", line: 3, members: "d", alg: "HS256", allowed: "RS256", unknown: "{x}", type: "image/png", origin: "https://a.example", seconds: 5, username: "ann" });
        expect(text, `${locale} ${code}`).not.toMatch(/apiErrors|\{(minimum|maximum|values|line|members|alg|allowed|unknown|origin|seconds|username)\}/);
      }
    }
    expect(translator("fr")("apiErrors.text_braces")).toBe("Les accolades { } ne sont pas équilibrées.");
  });

});

describe("console sign-out", () => {
  it("ends the console's login session and records console.signed_out", async () => {
    const { handleConsoleSignOut } = await import("@/lib/console/routes");
    const { userAgentCookieName } = await import("@/lib/session/user-agent");
    const b = await browserOf(admin);
    const signOut = (csrf: string) =>
      handleConsoleSignOut(
        t.inst,
        new Request(`${t.issuer}/ui/console/signout`, {
          method: "POST",
          headers: {
            cookie: `${CONSOLE_COOKIE}=${encodeURIComponent(b.cookies.console)}; ${userAgentCookieName(t.issuer)}=${b.ua.cookie}`,
            "user-agent": "console-signout-test",
          },
          body: new URLSearchParams({ csrf }),
        }),
      );

    expect((await signOut("forged")).status).toBe(403);
    expect((await consoleAccess(t.inst, b.cookies)).status).toBe("admin");

    const res = await signOut(consoleCsrfToken(t.inst.masterKey, b.ua.id, b.session.id));
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${t.issuer}/ui/console/signed-out`);
    expect((await consoleAccess(t.inst, b.cookies)).status).toBe("none");
    const audit = await (await t.api(`/management/v1/audit?action=console.signed_out&targetId=${admin.id}`)).json();
    const event = audit.events.find((e: { details: { sessionId?: string } }) => e.details.sessionId === b.session.id);
    expect(event).toMatchObject({ actorType: "user", actorId: admin.id, targetType: "user", userAgent: "console-signout-test" });
  });
});
