import { PROMPTS, RESPONSE_TYPES, type ResponseType } from "@/lib/protocol/vocabulary";
import { hasNul } from "@/lib/http/text-input";
import { MAX_FORM_BYTES, readBodyText } from "@/lib/http/body";
import { z } from "zod";
import { isFormEncoded } from "@/lib/http/body";
import type { HttpRequest } from "@/lib/http/request";

/** Every parameter the authorization endpoint reads; anything else is ignored (RFC 6749 3.1). */
export const AUTHORIZE_PARAMS = [
  "client_id",
  "redirect_uri",
  "response_type",
  "scope",
  "state",
  "nonce",
  "code_challenge",
  "code_challenge_method",
  "prompt",
  "max_age",
  "id_token_hint",
  "login_hint",
  "ui_locales",
  "response_mode",
  "request",
  "request_uri",
  "display",
  "claims",
  "acr_values",
] as const;
export type AuthorizeParam = (typeof AUTHORIZE_PARAMS)[number];

/** RFC 8707 2.1: `resource` may repeat (one per API the grant covers); `audience` is its synonym. */
export const RESOURCE_PARAMS = ["resource", "audience"] as const;

export type RawAuthorizeParams = {
  values: Partial<Record<AuthorizeParam, string>>;
  /** Known parameters that appeared more than once: invalid_request (RFC 6749 3.1). */
  repeated: AuthorizeParam[];
  /** Every `resource` and `audience` value, in order. */
  resources: string[];
};

const KNOWN = new Set<string>(AUTHORIZE_PARAMS);
const RESOURCE = new Set<string>(RESOURCE_PARAMS);

/** Reads the request's parameters from the query (GET) or the form body (POST, OIDC Core 3.1.2.1). */
export async function readAuthorizeParams(request: HttpRequest): Promise<RawAuthorizeParams | { unsupportedBody: true }> {
  let source: URLSearchParams;
  if (request.method === "POST") {
    if (!isFormEncoded(request)) return { unsupportedBody: true };
    source = new URLSearchParams(await readBodyText(request, MAX_FORM_BYTES));
  } else {
    source = new URL(request.url).searchParams;
  }
  const values: Partial<Record<AuthorizeParam, string>> = {};
  const repeated = new Set<AuthorizeParam>();
  const resources: string[] = [];
  for (const [k, v] of source) {
    // PostgreSQL cannot store a NUL: such a request is malformed (lib/http/text-input.ts).
    if (hasNul(v)) return { unsupportedBody: true };
    if (RESOURCE.has(k)) {
      if (v !== "") resources.push(v);
      continue;
    }
    if (!KNOWN.has(k)) continue;
    const key = k as AuthorizeParam;
    if (key in values) repeated.add(key);
    else values[key] = v;
  }
  return { values, repeated: [...repeated], resources };
}

export { PROMPTS, RESPONSE_MODES, type Prompt, type ResponseMode } from "@/lib/protocol/vocabulary";

/** The response type in its canonical spelling, whatever the order of its space-separated values. */
export function canonicalResponseType(value: string): ResponseType | undefined {
  const key = value.split(" ").filter(Boolean).sort().join(" ");
  return (RESPONSE_TYPES as readonly string[]).includes(key) ? (key as ResponseType) : undefined;
}

/** Value formats of the individual parameters (the order of checks lives in authorize.ts). */
export const authorizeFields = {
  // RFC 7636 4.2: a S256 challenge is the base64url SHA-256, 43 characters; 43-128 unreserved is the grammar.
  codeChallenge: z.string().regex(/^[A-Za-z0-9\-._~]{43,128}$/),
  maxAge: z.string().regex(/^\d{1,10}$/).transform(Number),
  prompt: z
    .string()
    .transform((v) => v.split(" ").filter(Boolean))
    .pipe(z.array(z.enum(PROMPTS)))
    .refine((p) => !p.includes("none") || p.length === 1, "prompt=none cannot be combined with other values")
    .refine((p) => new Set(p).size === p.length, "prompt values are repeated"),
  nonce: z.string().min(1).max(512),
  state: z.string().max(2048),
  loginHint: z.string().max(512),
  uiLocales: z.string().max(256),
};
