import { hasNul } from "@/lib/http/text-input";
import { BodyTooLarge, isFormEncoded, readBodyText } from "@/lib/http/body";
import { InvalidRequest } from "@/lib/protocol/errors";
import type { HttpRequest } from "@/lib/http/request";

/** A parsed `application/x-www-form-urlencoded` body: each parameter at most once, empty values absent. */
export type Form = ReadonlyMap<string, string>;

const FORM_TYPE = "application/x-www-form-urlencoded";

/**
 * Reads a back-channel request body (RFC 6749 3.2, 3.1): only form encoding; a repeated
 * parameter is `invalid_request`; a parameter sent without a value counts as omitted.
 */
export async function readForm(request: HttpRequest, multi: readonly string[] = []): Promise<Form> {
  if (!isFormEncoded(request)) throw new InvalidRequest(`The request body must be ${FORM_TYPE}.`);
  let text: string;
  try {
    text = await readBodyText(request);
  } catch (err) {
    if (err instanceof BodyTooLarge) throw err;
    throw new InvalidRequest("The request body could not be read.");
  }
  return parseForm(text, multi);
}

/**
 * `multi` names parameters a spec lets repeat (RFC 8693 `audience`, `resource`): their values
 * are joined with spaces, which none of their values may contain.
 */
export function parseForm(text: string, multi: readonly string[] = []): Form {
  const seen = new Set<string>();
  const form = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(text)) {
    if (hasNul(name) || hasNul(value)) throw new InvalidRequest("The request contains a NUL character.");
    if (multi.includes(name)) {
      if (value.includes(" ")) throw new InvalidRequest(`The ${name} parameter is invalid.`);
      if (value !== "") form.set(name, form.has(name) ? `${form.get(name)} ${value}` : value);
      continue;
    }
    if (seen.has(name)) throw new InvalidRequest(`The ${name} parameter is repeated.`);
    seen.add(name);
    if (value !== "") form.set(name, value);
  }
  return form;
}
