import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTranslator } from "use-intl/core";
import { applyOverrides, cachedOverrides, defaultTexts, overrideProblem } from "@/lib/i18n/overrides";
import { LOCALES } from "@/lib/i18n/locales";
import { writeOverrides } from "@/lib/store/text-overrides";
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

/**
 * A text as the hosted pages show it: the catalog with the overrides the message loader lays over
 * it (app/_server/i18n-request.ts), formatted by next-intl's translator; with the errors next-intl
 * would report (and log) for it.
 */
function rendered(overrides: Record<string, string>, key: string, values: Record<string, string | number>) {
  const errors: string[] = [];
  const t = createTranslator({ locale: "en", messages: applyOverrides(en, overrides), onError: (e) => errors.push(e.code) });
  return { text: (t as unknown as (key: string, values: Record<string, string | number>) => string)(key, values), errors };
}

describe("override syntax: overrides are ICU messages (the probe's tags)", () => {
  type Field = { path: string; code: string; message: string };
  const refused = async (texts: Record<string, string>): Promise<Field[]> => {
    const res = await put("/texts/en", { texts });
    expect(res.status).toBe(400);
    return ((await res.json()) as { fields: Field[] }).fields;
  };
  const stored = async (key: string) => entry((await (await get("/texts/en")).json()) as Texts, key)?.override;

  it("refuses a tag the default does not have (<b>…</b> on login.footer), and stores nothing", async () => {
    // What the probe stored rendered as the raw key, with a FORMATTING_ERROR on every view.
    expect(rendered({ "login.footer": "<b>Secured</b> by us" }, "login.footer", { product: "Torii" })).toEqual({ text: "login.footer", errors: ["FORMATTING_ERROR"] });
    const fields = await refused({ "login.footer": "<b>Secured</b> by us" });
    expect(fields).toEqual([{ path: "texts.login.footer", code: "text_tags", message: expect.stringContaining("<b>"), params: { tags: "<b>" } }]);
    expect(await stored("login.footer")).toBeNull();
    expect(Object.keys(await cachedOverrides(t.inst, "en"))).not.toContain("login.footer");
  });

  it("refuses an argument the default does not have", async () => {
    const fields = await refused({ "login.footer": "Secured by {nope}" });
    expect(fields).toMatchObject([{ path: "texts.login.footer", code: "text_arguments", message: expect.stringContaining("{product}") }]);
    expect(await stored("login.footer")).toBeNull();
  });

  it("refuses broken syntax, saying how to show a brace", async () => {
    expect(await refused({ "login.footer": "Secured by {" })).toMatchObject([{ path: "texts.login.footer", code: "text_braces", message: expect.stringContaining("'{'") }]);
    expect(await refused({ "login.footer": "{product, plural, one {#}}" })).toMatchObject([{ path: "texts.login.footer", code: "text_invalid" }]);
    expect(await refused({ "login.footer": "Secured by <i>{product}" })).toMatchObject([{ path: "texts.login.footer", code: "text_invalid" }]);
    expect(await stored("login.footer")).toBeNull();
  });

  it("accepts the default's argument, which the page then shows", async () => {
    expect((await put("/texts/en", { texts: { "login.footer": "Protected by {product}" } })).status).toBe(200);
    expect(await stored("login.footer")).toBe("Protected by {product}");
    expect(rendered(await cachedOverrides(t.inst, "en"), "login.footer", { product: "ACME" })).toEqual({ text: "Protected by ACME", errors: [] });
    await put("/texts/en", { texts: { "login.footer": null } });
  });

  it("accepts quoted braces and brackets, shown as they are", async () => {
    const text = "Secured by {product} '{'beta'}', '<'b> too";
    expect((await put("/texts/en", { texts: { "login.footer": text } })).status).toBe(200);
    expect(await stored("login.footer")).toBe(text);
    expect(rendered(await cachedOverrides(t.inst, "en"), "login.footer", { product: "ACME" })).toEqual({ text: "Secured by ACME {beta}, <b> too", errors: [] });
    await put("/texts/en", { texts: { "login.footer": null } });
  });

  it("an invalid override stored before the check shows the default text, and stays listed to be fixed", async () => {
    await writeOverrides(t.inst.db, "en", { "login.footer": "<b>Secured</b> by us", "login.loginName.title": "Welcome to ACME", "errors.unknownClient": "Unknown {" }, new Date());
    t.inst.caches.invalidate("textOverrides");
    const usable = await cachedOverrides(t.inst, "en");
    expect(usable["login.loginName.title"]).toBe("Welcome to ACME");
    expect(Object.keys(usable)).not.toContain("login.footer");
    expect(Object.keys(usable)).not.toContain("errors.unknownClient");
    expect(rendered(await cachedOverrides(t.inst, "en"), "login.footer", { product: "Torii" })).toEqual({ text: "Secured by Torii", errors: [] });
    // The authorization error page, rendered outside next-intl, falls back as well.
    const page = await new Browser(t).authorize({ client_id: "nope", redirect_uri: REDIRECT, ui_locales: "en" });
    expect(await page.text()).toContain("is not registered");
    expect(await stored("login.footer")).toBe("<b>Secured</b> by us");
    await put("/texts/en", { texts: { "login.footer": null, "login.loginName.title": null, "errors.unknownClient": null } });
    expect(await stored("login.footer")).toBeNull();
  });
});

describe("overrideProblem", () => {
  it("checks the message's syntax, and its arguments, their kinds and its tags against the default's", () => {
    // login.continueTo: "to continue to {client}"; login.loginName.title: no arguments;
    // login.errors.throttled: "Wait {seconds, plural, …}".
    expect(overrideProblem("en", "login.continueTo", "Hi {client}!")).toBeNull();
    expect(overrideProblem("en", "login.loginName.title", "Hi {name}")).toMatchObject({ code: "text_no_arguments", params: { unknown: "{name}" } });
    expect(overrideProblem("en", "login.continueTo", "Hi {who}")).toMatchObject({ code: "text_arguments", params: { unknown: "{who}", allowed: "{client}" } });
    expect(overrideProblem("en", "login.loginName.title", "Hi {")).toMatchObject({ code: "text_braces" });
    expect(overrideProblem("en", "login.loginName.title", "Hi {}")).toMatchObject({ code: "text_invalid", params: { error: "EMPTY_ARGUMENT" } });
    // A lone closing brace is text in ICU, and quoted braces and brackets are shown as they are.
    expect(overrideProblem("en", "login.loginName.title", "Hi }")).toBeNull();
    expect(overrideProblem("en", "login.loginName.title", "Use '{' and '<'b> as text")).toBeNull();
    expect(overrideProblem("en", "login.loginName.title", "<b>Hi</b>")).toMatchObject({ code: "text_tags", params: { tags: "<b>" } });
    expect(overrideProblem("en", "login.loginName.title", "a <b>Hi")).toMatchObject({ code: "text_invalid", params: { error: "UNCLOSED_TAG" } });
    // Kinds: the plural stays a plural (or a plain number); a text argument is not counted.
    expect(overrideProblem("en", "login.errors.throttled", "Wait {seconds, plural, one {a second} other {# s}}.")).toBeNull();
    expect(overrideProblem("en", "login.errors.throttled", "Wait {seconds} s.")).toBeNull();
    expect(overrideProblem("en", "login.errors.throttled", "Wait {seconds, date, short}.")).toMatchObject({ code: "text_argument_type" });
    expect(overrideProblem("en", "login.errors.throttled", "Wait {seconds, plural, one {#}}.")).toMatchObject({ code: "text_invalid", params: { error: "MISSING_OTHER_CLAUSE" } });
    expect(overrideProblem("en", "login.continueTo", "{client, plural, other {#}}")).toMatchObject({ code: "text_argument_type" });
    // Another locale's override is checked against the English default too.
    expect(overrideProblem("de", "login.continueTo", "weiter zu {client}")).toBeNull();
    expect(overrideProblem("en", "no.such.key", "x")).toMatchObject({ code: "text_unknown_key" });
  });

  it("accepts every catalog's own defaults, so an administrator may start from any of them", () => {
    for (const locale of LOCALES) {
      for (const [key, text] of defaultTexts(locale)) expect(overrideProblem(locale, key, text), `${locale} ${key}`).toBeNull();
    }
  });
});
