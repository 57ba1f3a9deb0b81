import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyOverrides, cachedOverrides, overrideProblem } from "@/lib/i18n/overrides";
import en from "@/messages/en.json";
import { Browser, makeClient, REDIRECT } from "./authorize-support";
import { startTestInstance, type TestInstance } from "./harness";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const put = (path: string, json: unknown) => t.api("/management/v1" + path, { method: "PUT", json });
const get = (path: string) => t.api("/management/v1" + path);
type Texts = { locale: string; texts: { key: string; default: string; override: string | null }[] };
const entry = (body: Texts, key: string) => body.texts.find((x) => x.key === key);

describe("login text overrides (management API /texts/{locale})", () => {
  it("lists every login text of a locale with its default and no override", async () => {
    const res = await get("/texts/de");
    expect(res.status).toBe(200);
    const body = (await res.json()) as Texts;
    expect(body.locale).toBe("de");
    expect(entry(body, "login.loginName.title")).toMatchObject({ override: null });
    expect(body.texts.length).toBeGreaterThan(20);
  });

  it("answers 404 for an unsupported locale and 401 without a token", async () => {
    expect((await get("/texts/xx")).status).toBe(404);
    expect((await t.api("/management/v1/texts/en", { auth: false })).status).toBe(401);
  });

  it("sets an override, which the message loader lays over the catalog, and resets it with null", async () => {
    let res = await put("/texts/en", { texts: { "login.loginName.title": "Welcome to ACME" } });
    expect(res.status).toBe(200);
    expect(entry((await res.json()) as Texts, "login.loginName.title")?.override).toBe("Welcome to ACME");
    const overrides = await cachedOverrides(t.inst, "en");
    expect(overrides).toEqual({ "login.loginName.title": "Welcome to ACME" });
    const merged = applyOverrides(en, overrides);
    expect(merged.login.loginName.title).toBe("Welcome to ACME");
    // The catalog itself is untouched, and other locales are not affected.
    expect(en.login.loginName.title).not.toBe("Welcome to ACME");
    expect(await cachedOverrides(t.inst, "fr")).toEqual({});

    res = await put("/texts/en", { texts: { "login.loginName.title": null } });
    expect(entry((await res.json()) as Texts, "login.loginName.title")?.override).toBeNull();
    expect(await cachedOverrides(t.inst, "en")).toEqual({});
  });

  it("refuses unknown keys, empty texts and arguments the default does not have, with field paths", async () => {
    const res = await put("/texts/en", {
      texts: { "no.such.key": "x", "login.loginName.title": "  ", "login.continueTo": "Go to {app}", "login.loginName.label": "Name {" },
    });
    expect(res.status).toBe(400);
    const fields = (await res.json()).fields as { path: string; message: string }[];
    expect(fields.map((f) => f.path).sort()).toEqual(
      ["texts.login.continueTo", "texts.login.loginName.label", "texts.login.loginName.title", "texts.no.such.key"].sort(),
    );
    expect(fields.find((f) => f.path === "texts.login.continueTo")?.message).toContain("{client}");
    // Nothing was written.
    expect(await cachedOverrides(t.inst, "en")).toEqual({});
  });

  it("accepts the default's own arguments and records an audit event", async () => {
    expect((await put("/texts/en", { texts: { "login.continueTo": "On to {client}" } })).status).toBe(200);
    const audit = await (await get("/audit?action=texts.updated")).json();
    expect(audit.events[0].details).toMatchObject({ locale: "en", set: ["login.continueTo"] });
  });
});

describe("texts of the pages the authorization endpoint renders itself", () => {
  it("lists the sign-out, authorization error and form_post texts beside the sign-in texts", async () => {
    const body = (await (await get("/texts/it")).json()) as Texts;
    for (const key of ["logout.confirm.title", "errors.unknownClient", "authorize.formPostTitle", "login.footer"]) {
      expect(entry(body, key)?.default, key).toBeTruthy();
    }
    // The console's own texts are not for end users and cannot be overridden.
    expect(body.texts.some((x) => x.key.startsWith("console."))).toBe(false);
    expect((await put("/texts/en", { texts: { "console.nav.texts": "Words" } })).status).toBe(400);
  });

  it("the authorization error page uses an override of its locale, and other locales keep theirs", async () => {
    expect((await put("/texts/fr", { texts: { "errors.unknownClient": "Application inconnue chez ACME." } })).status).toBe(200);
    const fr = await new Browser(t).authorize({ client_id: "nope", redirect_uri: REDIRECT, ui_locales: "fr" });
    expect(fr.status).toBe(400);
    expect(await fr.text()).toContain("Application inconnue chez ACME.");
    const en = await new Browser(t).authorize({ client_id: "nope", redirect_uri: REDIRECT, ui_locales: "en" });
    expect(await en.text()).toContain("is not registered");
    await put("/texts/fr", { texts: { "errors.unknownClient": null } });
  });

  it("the form_post page uses an override", async () => {
    const client = await makeClient(t);
    expect((await put("/texts/en", { texts: { "authorize.formPostTitle": "Back to ACME" } })).status).toBe(200);
    const res = await new Browser(t).authorize({
      client_id: client.id,
      redirect_uri: REDIRECT,
      response_type: "code",
      scope: "openid",
      prompt: "none",
      response_mode: "form_post",
      ui_locales: "en",
    });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("<title>Back to ACME</title>");
    expect(html).toContain('name="error" value="login_required"');
    await put("/texts/en", { texts: { "authorize.formPostTitle": null } });
  });
});

describe("overrideProblem", () => {
  it("checks braces and arguments", () => {
    expect(overrideProblem("Hello {name}", "Hi {name}!")).toBeNull();
    expect(overrideProblem("Hello", "Hi {name}")).toMatchObject({ code: "text_no_arguments", params: { unknown: "{name}" } });
    expect(overrideProblem("Hello {name}", "Hi {who}")).toMatchObject({ code: "text_arguments", params: { unknown: "{who}", allowed: "{name}" } });
    expect(overrideProblem("Hello", "Hi }")).toMatchObject({ code: "text_braces" });
  });
});
