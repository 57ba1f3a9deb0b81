/**
 * Why a value was refused: a stable machine-readable `code` (with the `params` its text needs),
 * and an English `message`. API clients branch on the code; the console shows the code's text in
 * the administrator's language (messages/<locale>.json, console.apiErrors) and falls back to the
 * message for a code it has no text for.
 */
export type Problem = { code: string; message: string; params?: Record<string, string | number> };

export const problem = (code: string, message: string, params?: Problem["params"]): Problem =>
  params ? { code, message, params } : { code, message };
