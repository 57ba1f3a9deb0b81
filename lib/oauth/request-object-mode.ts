import { RESPONSE_MODES, type ResponseMode } from "./params/authorize";

/**
 * The `response_mode` inside a request object (OIDC Core 6.1), read only to deliver the
 * request_not_supported refusal the way the client asked for it: a client that put
 * `response_mode=form_post` there (typically in an unsigned, `alg: none` object) must get its
 * error as a form POST, never in the query. Torii verifies no request object, so this is read
 * without trusting it, signed or not, and nothing else in it is used: the redirect URI, state
 * and everything else come from the checked outer parameters. The mode only decides the
 * encoding towards the already-registered redirect URI, which the outer `response_mode` could
 * choose as well. Undefined for anything that is not a readable JWS with a known mode
 * (an encrypted JWE has five parts and cannot be read).
 */
export function requestObjectResponseMode(requestObject: string | undefined): ResponseMode | undefined {
  if (!requestObject || requestObject.length > 16_384) return undefined;
  const parts = requestObject.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const header: unknown = JSON.parse(Buffer.from(parts[0]!, "base64url").toString("utf8"));
    const payload: unknown = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8"));
    if (!isObject(header) || typeof header.alg !== "string" || !isObject(payload)) return undefined;
    const mode = payload.response_mode;
    return typeof mode === "string" && (RESPONSE_MODES as readonly string[]).includes(mode) ? (mode as ResponseMode) : undefined;
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
