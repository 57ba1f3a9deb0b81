import { describe, expect, it } from "vitest";
import { argumentNames } from "@/lib/i18n/overrides";
import { CATALOGS } from "@/lib/i18n/messages";
import { LOCALES } from "@/lib/i18n/locales";

// Every page and mail is complete in every language: the catalogs have the same keys, and each
// text takes the same arguments as the English one.
function flatten(node: unknown, prefix = "", out = new Map<string, string>()): Map<string, string> {
  if (node && typeof node === "object") for (const [k, v] of Object.entries(node as Record<string, unknown>)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  else if (typeof node === "string") out.set(prefix, node);
  return out;
}

describe("message catalogs", () => {
  const en = flatten(CATALOGS.en);
  for (const locale of LOCALES.filter((l) => l !== "en")) {
    it(`${locale} has every key of en and no other, with the same arguments`, () => {
      const other = flatten(CATALOGS[locale]);
      expect([...en.keys()].filter((k) => !other.has(k)), "missing").toEqual([]);
      expect([...other.keys()].filter((k) => !en.has(k)), "extra").toEqual([]);
      const differing = [...en].filter(([k, text]) => [...argumentNames(text)].sort().join() !== [...argumentNames(other.get(k)!)].sort().join()).map(([k]) => k);
      expect(differing, "arguments").toEqual([]);
    });
  }
});
