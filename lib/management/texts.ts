import { dateOf } from "@/lib/clock";
import { z } from "zod";
import { isLocale, LOCALES, type Locale } from "@/lib/i18n/locales";
import { defaultTexts, mutateOverrides, overrideProblem } from "@/lib/i18n/overrides";
import { readOverrides, writeOverrides } from "@/lib/store/text-overrides";
import { recordAudit } from "@/lib/store/audit";
import { invalidFields, notFound, type FieldError } from "./http";
import { named, route, type Ctx } from "./route";

const Text = z.object({
  key: z.string().describe("Path of the text in the message catalog, e.g. login.loginName.title (sign-in), logout.confirm.title (sign-out), errors.title (authorization error page), authorize.formPostTitle (form_post page)."),
  default: z.string().describe("The built-in text of this locale."),
  override: z.string().nullable().describe("The administrator's text, used instead of the default; null when none."),
});
const TextList = named("LoginTexts", z.object({ locale: z.enum(LOCALES), texts: z.array(Text) }));
const TextsUpdate = named(
  "LoginTextsUpdate",
  z.strictObject({
    texts: z
      .record(z.string().max(200), z.string().nullable())
      .describe("key -> new text, or null to reset it to the default. Keys left out keep their override."),
  }),
);

function localeOf(ctx: Ctx): Locale {
  const l = ctx.params.locale!;
  if (!isLocale(l)) throw notFound("locale");
  return l;
}

async function view(ctx: Ctx, locale: Locale) {
  const overrides = await readOverrides(ctx.db, locale);
  return {
    locale,
    texts: [...defaultTexts(locale)].map(([key, text]) => ({ key, default: text, override: overrides[key] ?? null })),
  };
}

/** Per-locale overrides of every text of the hosted pages (lib/i18n/overrides.ts); the pages use them at once. */
export const textRoutes = [
  route({
    method: "GET",
    path: "/texts/{locale}",
    operationId: "getLoginTexts",
    summary: "The hosted pages' texts of a locale (en, de, fr, it): sign-in, registration, sign-out and authorization pages, each default and its override.",
    tag: "texts",
    success: { status: 200, description: "The texts.", schema: TextList },
    errors: [404],
    async handler(ctx) {
      return view(ctx, localeOf(ctx));
    },
  }),
  route({
    method: "PUT",
    path: "/texts/{locale}",
    operationId: "setLoginTexts",
    summary: "Override texts of a locale, or reset them to the default with null. An override must be a valid ICU message that uses only the {arguments} and <tags> of its default; write '{' to show a brace.",
    tag: "texts",
    body: TextsUpdate,
    success: { status: 200, description: "The texts now.", schema: TextList },
    errors: [404],
    async handler(ctx, body) {
      const locale = localeOf(ctx);
      const defaults = defaultTexts(locale);
      const problems: FieldError[] = [];
      const changes: Record<string, string | null> = {};
      for (const [key, value] of Object.entries(body.texts)) {
        const def = defaults.get(key);
        if (def === undefined) {
          problems.push({ path: `texts.${key}`, code: "text_unknown_key", message: "No hosted page text has this key." });
          continue;
        }
        // The same text as the default is stored as no override, so later catalog fixes reach it.
        if (value === null || value === def) {
          changes[key] = null;
          continue;
        }
        const problem = overrideProblem(locale, key, value);
        if (problem) problems.push({ path: `texts.${key}`, ...problem });
        else changes[key] = value;
      }
      if (problems.length) throw invalidFields(problems);
      await mutateOverrides(ctx.inst, async (tx) => {
        await writeOverrides(tx, locale, changes, dateOf(ctx.inst.clock));
        await recordAudit(tx, ctx.actor, {
          action: "texts.updated",
          targetType: "instance",
          details: {
            locale,
            set: Object.keys(changes).filter((k) => changes[k] !== null),
            reset: Object.keys(changes).filter((k) => changes[k] === null),
          },
        });
      });
      return view(ctx, locale);
    },
  }),
];
