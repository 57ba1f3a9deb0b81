import type { z } from "zod";
import type { Db } from "@/lib/db/client";
import type { Engine } from "@/lib/engine";
import type { Actor } from "@/lib/store/audit";
import type { User } from "@/lib/store/users";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** What a handler gets: the authenticated administrator, as the actor its audit events name. */
export type Ctx = {
  request: Request;
  inst: Engine;
  db: Db;
  user: User;
  actor: Actor;
  params: Record<string, string>;
  /** The parsed JSON body before validation (for handlers whose schema depends on stored state). */
  rawBody: unknown;
};

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

type RouteDef<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined> = {
  method: Method;
  /** Below /management/v1, with `{name}` path parameters. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  body?: B;
  /** Documents a body the handler validates itself (when the schema depends on stored state). */
  bodyDoc?: z.ZodType;
  query?: Q;
  success: { status: 200 | 201 | 204; description: string; schema?: z.ZodType };
  /** Error statuses besides 400/401/403 that this route can answer, for the OpenAPI document. */
  errors?: (404 | 409)[];
  handler: (ctx: Ctx, body: Out<B>, query: Out<Q>) => Promise<unknown>;
};

export type AnyRoute = RouteDef<z.ZodType | undefined, z.ZodType | undefined>;

/** Declares a route with its body and query types flowing into the handler. */
export function route<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined>(
  def: RouteDef<B, Q>,
): AnyRoute {
  return def as unknown as AnyRoute;
}

/** Names of the schemas that appear in the OpenAPI document's components. */
export const SCHEMA_NAMES = new Map<z.ZodType, string>();

export function named<S extends z.ZodType>(name: string, schema: S): S {
  SCHEMA_NAMES.set(schema, name);
  return schema;
}

export function actorFor(request: Request, user: User, address: string): Actor {
  return { type: "user", id: user.id, ip: address, userAgent: request.headers.get("user-agent") };
}
