import { z } from "zod";
import { codedPattern } from "@/lib/problem";

/**
 * Names and labels that pages and mails show to people: a client's name on the consent page, a
 * user's names, an API's, the product's, a second factor's. They must not hold control
 * characters, nor the characters that change the direction of the text around them (embeddings,
 * overrides and isolates, U+202A-U+202E and U+2066-U+2069): with those a name can disguise itself
 * or reorder what follows it on the page ("Trojan Source", CVE-2021-42574; found by a probe in a
 * client's name). The plain marks U+200E and U+200F, which right-to-left text needs, stay.
 */
const UNSHOWN = "\\p{Cc}\\u202a-\\u202e\\u2066-\\u2069";
const SHOWABLE = codedPattern(new RegExp(`^[^${UNSHOWN}]*$`, "u"), "text_characters");
const UNSHOWABLE = new RegExp(`[${UNSHOWN}]`, "gu");

/** A trimmed string of at most `max` characters that pages can show as it is. */
export function shownText(max: number) {
  return z.string().trim().max(max).regex(SHOWABLE, "Must not contain control characters or characters that change the text direction.");
}

/** Whether `value` can be shown as it is (what `shownText` checks). */
export function isShowable(value: string): boolean {
  return SHOWABLE.test(value);
}

/** `value` without what `shownText` refuses: for names a person types where a refusal would only be in the way. */
export function showable(value: string): string {
  return value.replace(UNSHOWABLE, "");
}
