import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CATALOGS } from "@/lib/i18n/messages";
import { LOCALES } from "@/lib/i18n/locales";

/*
 * Every message key the code asks for exists in every catalog, so that no page, mail or error
 * shows a key instead of a text in any language. The code is scanned, not run: each translator
 * the code makes (`getTranslations("ns")`, `useTranslations("ns")`, or a small wrapper around
 * `translate(locale, \`ns.${key}\`)`) is followed to its calls; a literal key must name a text,
 * a key built from a template (`t(\`errors.${code}\`)`) must have its fixed part name a group of
 * texts. Which member of the group a page picks at run time is checked in the browser
 * (e2e/messages.spec.ts renders the pages with a visible marker for a missing text).
 */

const ROOTS = ["app", "lib"];

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(full, out);
    else if (/\.(ts|tsx)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(full);
  }
  return out;
}

type Use = { key: string; kind: "text" | "group"; where: string };

/** The message keys one source file asks for. */
function keysUsed(source: string, file = "source"): Use[] {
  const uses: Use[] = [];
  // A name may be bound more than once in a file (generateMetadata and the page): a call uses the
  // binding nearest before it.
  const bindings: { name: string; ns: string; at: number }[] = [];
  // const t = await getTranslations("ns") / useTranslations("ns") / getTranslations()
  for (const m of source.matchAll(/(?:const|let)\s+(\w+)\s*=\s*(?:await\s+)?(?:getTranslations|useTranslations)\(\s*(?:"([^"]*)")?\s*\)/g))
    bindings.push({ name: m[1]!, ns: m[2] ?? "", at: m.index });
  // const t = (key: string) => translate(locale, `ns.${key}`, ...)  (pages the core renders itself)
  for (const m of source.matchAll(/(?:const|let)\s+(\w+)\s*=\s*\(\s*\w+(?::\s*string)?\s*\)\s*=>\s*translate\([^,]+,\s*`([\w.]+)\.\$\{\w+\}`/g))
    bindings.push({ name: m[1]!, ns: m[2]!, at: m.index });
  const line = (index: number) => `${file}:${source.slice(0, index).split("\n").length}`;
  for (const name of new Set(bindings.map((b) => b.name))) {
    const mine = bindings.filter((b) => b.name === name).sort((a, b) => a.at - b.at);
    const call = new RegExp(`(?<![\\w.])${name}(?:\\.(rich|markup|raw|has))?\\(\\s*(?:"([^"]+)"|\`([^\`]*)\`)`, "g");
    for (const m of source.matchAll(call)) {
      const binding = mine.filter((b) => b.at < m.index).at(-1);
      if (!binding) continue;
      const full = (key: string) => (binding.ns ? `${binding.ns}.${key}` : key);
      if (m[1] === "has") continue; // asking whether a text exists is how a page avoids a gap
      if (m[2] !== undefined) uses.push({ key: full(m[2]), kind: m[1] === "raw" ? "group" : "text", where: line(m.index) });
      else {
        const template = m[3] ?? "";
        const fixed = template.split("${")[0] ?? "";
        if (!template.includes("${")) uses.push({ key: full(fixed), kind: "text", where: line(m.index) });
        else if (fixed.replace(/\.$/, "")) uses.push({ key: full(fixed.replace(/\.$/, "")), kind: "group", where: line(m.index) });
      }
    }
  }
  // translate(locale, "a.b.c", ...) called directly
  for (const m of source.matchAll(/\btranslate\([^,()]+,\s*"([\w.]+)"/g)) uses.push({ key: m[1]!, kind: "text", where: line(m.index) });
  return uses;
}

function lookup(catalog: unknown, key: string): unknown {
  return key.split(".").reduce<unknown>((node, part) => (node && typeof node === "object" ? (node as Record<string, unknown>)[part] : undefined), catalog);
}

function missing(uses: Use[]): string[] {
  const out: string[] = [];
  for (const locale of LOCALES)
    for (const u of uses) {
      const found = lookup(CATALOGS[locale], u.key);
      const ok = u.kind === "text" ? typeof found === "string" : found !== undefined;
      if (!ok) out.push(`${locale}: ${u.key} (${u.where})`);
    }
  return out;
}

describe("message keys used by the code", () => {
  const files = ROOTS.flatMap((r) => sourceFiles(r));
  const uses = files.flatMap((f) => keysUsed(fs.readFileSync(f, "utf8"), f));

  it("finds the keys of every page family (the scan is not blind)", () => {
    const prefixes = new Set(uses.map((u) => u.key.split(".")[0]));
    for (const family of ["login", "account", "console", "logout", "mail", "errors", "authorize", "home"]) expect(prefixes, family).toContain(family);
    // The account page's factors and passkeys, and the login's factor pages, are among them.
    expect(uses.some((u) => u.key.startsWith("account.factors"))).toBe(true);
    expect(uses.some((u) => u.key.startsWith("account.passkeys") || u.key.includes("passkey"))).toBe(true);
    expect(uses.some((u) => u.key.startsWith("login.secondFactor"))).toBe(true);
    expect(uses.some((u) => u.key.startsWith("login.enrolFactor"))).toBe(true);
    expect(uses.length).toBeGreaterThan(500);
  });

  it("every key exists in all four catalogs", () => {
    expect(missing(uses)).toEqual([]);
  });

  it("a key missing from a catalog is reported (the check can fail)", () => {
    const source = `
      const t = await getTranslations("login");
      const m = (key: string) => translate(locale, \`mail.\${key}\`, values);
      t("password.title"); t("no.such.key"); t(\`errors.\${code}\`); t(\`nogroup.\${x}\`); m("nothere");
      if (t.has("absent")) t.raw("absentGroup");`;
    const report = missing(keysUsed(source));
    expect(report.filter((r) => r.startsWith("en: "))).toEqual([
      "en: login.no.such.key (source:4)",
      "en: login.nogroup (source:4)",
      "en: login.absentGroup (source:5)",
      "en: mail.nothere (source:4)",
    ]);
  });
});
