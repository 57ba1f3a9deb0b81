import { z } from "zod";
import type { Form } from "../form";
import { InvalidRequest } from "@/lib/protocol/errors";

/**
 * Validates a form against an endpoint's declared parameters. Parameters not declared are
 * ignored (RFC 6749 3.2); a missing or malformed declared one is `invalid_request` naming it.
 */
export function parseParams<S extends z.ZodObject>(schema: S, form: Form): z.infer<S> {
  const input: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const v = form.get(key);
    if (v !== undefined) input[key] = v;
  }
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const name = String(issue.path[0] ?? "request");
  throw new InvalidRequest(input[name] === undefined ? `The ${name} parameter is missing.` : `The ${name} parameter is invalid: ${issue.message}.`);
}

/** A required form parameter. */
export const required = () => z.string({ error: "missing" });
export const optional = () => z.string().optional();
