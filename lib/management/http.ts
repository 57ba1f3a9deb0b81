import { findNul, nestedDeeperThan } from "@/lib/http/text-input";
import { BodyTooLarge, MAX_BODY_BYTES, readBodyText } from "@/lib/http/body";
import { z } from "zod";
import { NO_STORE } from "@/lib/http/responses";
import { patternCode, problem, type Problem } from "@/lib/problem";
import type { HttpRequest } from "@/lib/http/request";

/** A refused field: its dotted path in the body or query (`redirectUris.0`), and why (lib/problem.ts). */
export type FieldError = Problem & { path: string };

/**
 * Every management API error: `{error, message, fields?}` with its status. Thrown anywhere in a
 * handler and rendered once by the router, so no handler can leak a stack trace.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
    readonly fields?: FieldError[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  toJSON() {
    return { error: this.error, message: this.message, ...(this.fields ? { fields: this.fields } : {}) };
  }
}

export const invalid = (message: string, fields: FieldError[] = []) => new ApiError(400, "invalid_request", message, fields);
export const invalidFields = (fields: FieldError[]) =>
  new ApiError(400, "invalid_request", "The request has invalid fields.", fields);
export const notFound = (what = "resource") => new ApiError(404, "not_found", `No such ${what}.`);
export const conflict = (message: string, fields?: FieldError[]) => new ApiError(409, "conflict", message, fields);
/** 429 with `Retry-After` (RFC 9110 §10.2.3), in whole seconds. */
export const tooManyRequests = (message: string, retryAfterSeconds: number, fields?: FieldError[]) =>
  new ApiError(429, "too_many_requests", message, fields, { "Retry-After": String(retryAfterSeconds) });

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: {
      ...(status === 204 ? {} : { "Content-Type": "application/json; charset=utf-8" }),
      // Responses carry secrets (client secrets, PATs, private keys) and personal data: never cached.
      ...NO_STORE,
      ...headers,
    },
  });
}

export function errorResponse(err: ApiError): Response {
  return jsonResponse(err.toJSON(), err.status, err.headers);
}

/** The code and params of a zod issue: zod's own checks by kind, custom ones by their `params.code`. */
function issueProblem(issue: z.core.$ZodIssue): Problem {
  const p = (code: string, params?: Problem["params"]) => problem(code, issue.message, params);
  switch (issue.code) {
    case "too_small": {
      const min = Number(issue.minimum);
      if (issue.origin === "string") return min <= 1 ? p("required") : p("too_short", { minimum: min });
      if (issue.origin === "array" || issue.origin === "set") return p("too_few", { minimum: min });
      return p("too_small", { minimum: min });
    }
    case "too_big": {
      const max = Number(issue.maximum);
      if (issue.origin === "string") return p("too_long", { maximum: max });
      if (issue.origin === "array" || issue.origin === "set") return p("too_many", { maximum: max });
      return p("too_big", { maximum: max });
    }
    case "invalid_type":
      return issue.expected === "number" || issue.expected === "int" ? p("not_a_number") : p("invalid_type", { expected: issue.expected });
    case "invalid_format":
      if (issue.format === "regex") return p(patternCode(issue.pattern ?? "") ?? "invalid_format");
      return p(issue.format === "email" ? "email" : "invalid_format", { format: issue.format });
    case "invalid_value":
      return p("invalid_value", { values: issue.values.map(String).join(", ") });
    case "custom":
      return typeof issue.params?.code === "string" ? p(issue.params.code, issue.params.values as Record<string, string | number> | undefined) : p("invalid");
    default:
      return p("invalid");
  }
}

function issuesToFields(issues: readonly z.core.$ZodIssue[]): FieldError[] {
  const fields: FieldError[] = [];
  for (const issue of issues) {
    const base = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) fields.push({ path: [...base, key].join("."), code: "unknown_field", message: "Unknown field." });
    } else {
      fields.push({ path: base.join("."), ...issueProblem(issue) });
    }
  }
  return fields;
}

/** A custom zod issue with a code (and the params its text needs). */
export function addProblem(ctx: z.core.$RefinementCtx, p: Problem, path?: PropertyKey[]): void {
  ctx.addIssue({ code: "custom", message: p.message, params: { code: p.code, values: p.params }, ...(path ? { path } : {}) });
}

export function parseWith<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const r = schema.safeParse(input);
  if (!r.success) throw invalidFields(issuesToFields(r.error.issues));
  return r.data;
}

/** How deep a management API body may nest arrays and objects. */
const MAX_JSON_DEPTH = 64;

/**
 * The JSON body of a request. An empty body reads as `{}` so that body-less calls of endpoints
 * whose fields are all optional work; anything else must be `application/json` and parse.
 */
export async function readJsonBody(request: HttpRequest): Promise<unknown> {
  let text: string;
  try {
    text = await readBodyText(request, MAX_BODY_BYTES);
  } catch (err) {
    if (err instanceof BodyTooLarge) throw new ApiError(413, "invalid_request", "The request body is too large.");
    throw invalid("The request body could not be read.", [{ path: "", code: "unreadable_body", message: "The request body could not be read." }]);
  }
  if (text.trim() === "") return {};
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") {
    throw invalid("The request body must be JSON with Content-Type: application/json.", [
      { path: "", code: "unsupported_content_type", message: `Unsupported content type ${JSON.stringify(type || "(none)")}.` },
    ]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid("The request body is not valid JSON.", [{ path: "", code: "malformed_json", message: "Malformed JSON." }]);
  }
  // No resource nests anywhere near this deep; deeper bodies would only make the recursive checks
  // below overflow the stack.
  if (nestedDeeperThan(parsed, MAX_JSON_DEPTH)) {
    throw invalid(`The request body nests deeper than ${MAX_JSON_DEPTH} levels.`, [{ path: "", code: "too_deeply_nested", message: `Nested deeper than ${MAX_JSON_DEPTH} levels.` }]);
  }
  // PostgreSQL cannot store a NUL (lib/http/text-input.ts): the field that holds one is refused.
  const nulAt = findNul(parsed);
  if (nulAt) throw invalidFields([{ path: nulAt.join("."), code: "nul_character", message: "Must not contain a NUL character." }]);
  const protoAt = protoKeyAt(parsed);
  if (protoAt) throw invalidFields([{ path: protoAt.join("."), code: "unknown_field", message: "Unknown field." }]);
  return parsed;
}

/**
 * Where the body has a member named `__proto__`. JSON.parse makes it an ordinary member, but the
 * checks copy members into fresh objects, where that name sets the prototype instead: the member
 * vanished and the request went through as if it had not been sent (found by a probe, in a
 * client's apiScopes, a user's roles and text overrides). It is an unknown field everywhere.
 */
function protoKeyAt(value: unknown, path: string[] = []): string[] | null {
  if (!value || typeof value !== "object") return null;
  for (const [k, v] of Object.entries(value)) {
    const at = [...path, k];
    if (k === "__proto__") return at;
    const inner = protoKeyAt(v, at);
    if (inner) return inner;
  }
  return null;
}
