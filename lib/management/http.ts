import type { z } from "zod";
import { NO_STORE } from "@/lib/http/responses";

/** A field-level problem in a request body or query: `path` is dotted (`redirectUris.0`). */
export type FieldError = { path: string; message: string };

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

export function issuesToFields(issues: readonly z.core.$ZodIssue[]): FieldError[] {
  const fields: FieldError[] = [];
  for (const issue of issues) {
    const base = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) fields.push({ path: [...base, key].join("."), message: "Unknown field." });
    } else {
      fields.push({ path: base.join("."), message: issue.message });
    }
  }
  return fields;
}

export function parseWith<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const r = schema.safeParse(input);
  if (!r.success) throw invalidFields(issuesToFields(r.error.issues));
  return r.data;
}

/** Largest JSON body accepted (a 512 KiB logo as a base64 data URL fits). */
const MAX_BODY_CHARS = 1024 * 1024;

/**
 * The JSON body of a request. An empty body reads as `{}` so that body-less calls of endpoints
 * whose fields are all optional work; anything else must be `application/json` and parse.
 */
export async function readJsonBody(request: Request): Promise<unknown> {
  const text = await request.text();
  if (text.trim() === "") return {};
  if (text.length > MAX_BODY_CHARS) throw new ApiError(413, "invalid_request", "The request body is too large.");
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") {
    throw invalid("The request body must be JSON with Content-Type: application/json.", [
      { path: "", message: `Unsupported content type ${JSON.stringify(type || "(none)")}.` },
    ]);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw invalid("The request body is not valid JSON.", [{ path: "", message: "Malformed JSON." }]);
  }
}
