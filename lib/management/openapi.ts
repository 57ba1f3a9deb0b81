import type { Engine } from "@/lib/engine";
import { z } from "zod";
import { API_ROUTES } from "./api-routes";
import { SCHEMA_NAMES } from "./route";

type JsonSchema = Record<string, unknown>;

const ErrorSchema = z.object({
  error: z.string().describe("Machine-readable code: invalid_request, unauthorized, forbidden, not_found, method_not_allowed, conflict."),
  message: z.string(),
  fields: z
    .array(
      z.object({
        path: z.string().describe("Dotted path into the body or query, e.g. redirectUris.0; empty for the request as a whole."),
        code: z
          .string()
          .describe("Machine-readable reason, stable across versions: required, too_long, not_a_number, invalid_value, unknown_field, email, redirect_uri_fragment, key_rsa_short, password_min_length, username_taken, last_admin, ..."),
        message: z.string().describe("The reason in English."),
        params: z.record(z.string(), z.union([z.string(), z.number()])).optional().describe("Values the reason refers to, e.g. {maximum: 200}."),
      }),
    )
    .optional(),
});

const ERRORS: Record<number, string> = {
  400: "Invalid body or query; `fields` names each problem.",
  401: "No valid personal access token.",
  403: "The token's user is not an administrator.",
  404: "No such resource.",
  409: "Conflicts with an existing resource.",
  429: "Too many requests; `Retry-After` says in how many seconds to try again.",
  503: "The database is out of reach for now; `Retry-After` says in how many seconds to try again.",
};

/** JSON Schema 2020-12 (the dialect of OpenAPI 3.1) from the very zod schema that validates. */
function toSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  return rest;
}

function build(issuer: string) {
  const components: Record<string, JsonSchema> = { Error: toSchema(ErrorSchema, "output") };
  const ref = (schema: z.ZodType, io: "input" | "output"): JsonSchema => {
    const name = SCHEMA_NAMES.get(schema);
    if (!name) return toSchema(schema, io);
    components[name] ??= toSchema(schema, io);
    return { $ref: `#/components/schemas/${name}` };
  };
  const errorResponse = (status: number) => ({
    description: ERRORS[status],
    content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
  });

  const paths: Record<string, Record<string, unknown>> = {
    "/openapi.json": {
      get: {
        operationId: "getOpenApiDocument",
        summary: "This document.",
        tags: ["meta"],
        security: [],
        responses: { 200: { description: "The OpenAPI 3.1 document.", content: { "application/json": {} } } },
      },
    },
  };
  for (const r of API_ROUTES) {
    const parameters: JsonSchema[] = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    if (r.query) {
      const q = toSchema(r.query, "input") as { properties?: Record<string, JsonSchema>; required?: string[] };
      for (const [name, schema] of Object.entries(q.properties ?? {})) {
        const { description, ...s } = schema;
        parameters.push({ name, in: "query", required: q.required?.includes(name) ?? false, schema: s, ...(description ? { description } : {}) });
      }
    }
    const bodySchema = r.body ?? r.bodyDoc;
    const responses: Record<string, unknown> = {
      [r.success.status]: {
        description: r.success.description,
        ...(r.success.schema ? { content: { "application/json": { schema: ref(r.success.schema, "output") } } } : {}),
      },
      ...(bodySchema || r.query ? { 400: errorResponse(400) } : {}),
      401: errorResponse(401),
      403: errorResponse(403),
      503: errorResponse(503),
    };
    for (const s of r.errors ?? []) responses[s] = errorResponse(s);
    (paths[r.path] ??= {})[r.method.toLowerCase()] = {
      operationId: r.operationId,
      summary: r.summary,
      tags: [r.tag],
      ...(parameters.length ? { parameters } : {}),
      ...(bodySchema
        ? { requestBody: { required: true, content: { "application/json": { schema: ref(bodySchema, "input") } } } }
        : {}),
      responses,
    };
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "Torii management API",
      version: "1",
      description:
        "Clients, users, features, signing keys, settings, branding and the audit log of a Torii instance. Every call needs `Authorization: Bearer <personal access token>` of a user with the admin role; errors are `{error, message, fields?}`.",
    },
    servers: [{ url: `${issuer}/management/v1` }],
    security: [{ pat: [] }],
    tags: ["clients", "apis", "users", "features", "keys", "settings", "mail", "branding", "texts", "audit", "meta"].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: { pat: { type: "http", scheme: "bearer", description: "A personal access token of an administrator." } },
      schemas: components,
    },
  };
}

/** Built once per engine: it follows from the schemas and the issuer alone. */
export function openApiDocument(engine: Pick<Engine, "issuer" | "memo">) {
  return engine.memo.get("openapi", () => build(engine.issuer));
}
