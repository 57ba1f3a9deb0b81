import { z } from "zod";
import { codedPattern } from "@/lib/problem";
import { isShowable, shownText } from "@/lib/text/shown-text";

/**
 * The rules for a user's fields, shared by the management API and self-registration so that a
 * name one of them accepts is never one the other calls invalid.
 */

/** Letters and digits of any script and . _ @ + -, so a username never needs quoting in a login name. */
export const username = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(codedPattern(/^[\p{L}\p{N}._@+-]+$/u, "username_characters"), "Only letters, digits and . _ @ + - are allowed.");

/**
 * Self-registration is stricter than an administrator, since anyone may choose these names:
 * - 2 to 64 characters: a one-character name is almost always a slip;
 * - no `@`: a chosen name must never read as another person's login name (`name@primarydomain`)
 *   or email address, which sign-in and the password reset look up as a username first (a
 *   probe registered `victim@localhost` and took over both);
 * - as Unicode's compatibility form writes it, with the letters of one script (digits and
 *   `. _ + -` aside): `ａｌｉｃｅ` in full-width forms, or `alice` with a Cyrillic `а`, would look
 *   like someone else's name (UTS #39, mixed-script confusables).
 * The sign-up page states this in login.errors.usernameInvalid.
 */
export const registeredUsername = username
  .min(2)
  .max(64)
  .refine((name) => !name.includes("@") && name === name.normalize("NFKC") && lettersOfOneScript(name));

/**
 * Scripts a name may be written in; Japanese mixes three, Korean two, and both with Han. A letter
 * of a script not listed counts as one more script.
 */
const SCRIPTS: [string, RegExp][] = [
  ["Latin", /\p{Script=Latin}/u],
  ["Greek", /\p{Script=Greek}/u],
  ["Cyrillic", /\p{Script=Cyrillic}/u],
  ["Armenian", /\p{Script=Armenian}/u],
  ["Georgian", /\p{Script=Georgian}/u],
  ["Hebrew", /\p{Script=Hebrew}/u],
  ["Arabic", /\p{Script=Arabic}/u],
  ["Devanagari", /\p{Script=Devanagari}/u],
  ["Bengali", /\p{Script=Bengali}/u],
  ["Tamil", /\p{Script=Tamil}/u],
  ["Thai", /\p{Script=Thai}/u],
  ["CJK", /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u],
];

function lettersOfOneScript(name: string): boolean {
  const seen = new Set<string>();
  for (const ch of name) {
    if (!/\p{L}/u.test(ch)) continue;
    seen.add(SCRIPTS.find(([, re]) => re.test(ch))?.[0] ?? "other");
    if (seen.size > 1) return false;
  }
  return true;
}

export const email = z.email().max(320);

/** Given and family names. */
export const personName = shownText(200);

/**
 * Why a given or family name a person typed is refused, or null: what the sign-up page and the
 * account page each tell them (too long, or holding characters a page cannot show).
 */
export function personNameFault(value: string): "tooLong" | "characters" | null {
  if (personName.safeParse(value).success) return null;
  return isShowable(value.trim()) ? "tooLong" : "characters";
}

/** Login name as introspection and the UI show it: username@primarydomain. */
export function loginNameOf(user: { username: string }, primaryDomain: string): string {
  return `${user.username}@${primaryDomain}`;
}
