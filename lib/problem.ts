/**
 * Why a value was refused: a stable machine-readable `code` (with the `params` its text needs),
 * and an English `message`. API clients branch on the code; the console shows the code's text in
 * the administrator's language (messages/<locale>.json, console.apiErrors) and falls back to the
 * message for a code it has no text for.
 */
export type Problem = { code: string; message: string; params?: Record<string, string | number> };

export const problem = (code: string, message: string, params?: Problem["params"]): Problem =>
  params ? { code, message, params } : { code, message };

/**
 * Codes of the string patterns schemas declare with `codedPattern()`: a zod regex issue carries
 * only the pattern, so its code is looked up by it (lib/management/http.ts).
 */
const PATTERN_CODES = new Map<string, string>();

/** `re`, registered so that a string refused by `.regex(re, message)` reports `code`. */
export function codedPattern(re: RegExp, code: string): RegExp {
  PATTERN_CODES.set(String(re), code);
  return re;
}

export function patternCode(pattern: string): string | undefined {
  return PATTERN_CODES.get(pattern);
}
