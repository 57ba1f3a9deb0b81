import type { z } from "zod";
import type { Db } from "@/lib/db/client";
import type { Engine } from "@/lib/engine";
import type { Actor } from "@/lib/store/audit";
import type { User } from "@/lib/store/users";
import type { HttpRequest } from "@/lib/http/request";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** What a handler gets: the authenticated administrator, as the actor its audit events name. */
export type Ctx = {
  request: HttpRequest;
  inst: Engine;
  db: Db;
  user: User;
  actor: Actor;
  params: Record<string, string>;
  /** The parsed JSON body before validation (for handlers whose schema depends on stored state). */
  rawBody: unknown;
};

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What a handler returns: the success schema's input (the router sends it as JSON), nothing for 204. */
type Result<S> = S extends z.ZodType ? z.input<S> : unknown;

type RouteDef<
  O extends string,
  P extends string = string,
  B extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  S extends z.ZodType | undefined = undefined,
  D extends z.ZodType | undefined = undefined,
> = {
  method: Method;
  /** Below /management/v1, with `{name}` path parameters. */
  path: P;
  operationId: O;
  summary: string;
  tag: string;
  body?: B;
  /** Documents a body the handler validates itself (when the schema depends on stored state). */
  bodyDoc?: D;
  query?: Q;
  success: { status: 200 | 201 | 204; description: string; schema?: S };
  /** Error statuses besides 400/401/403 that this route can answer, for the OpenAPI document. */
  errors?: (404 | 409 | 429)[];
  handler: (ctx: Ctx, body: Out<B>, query: Out<Q>) => Promise<Result<S>>;
};

export type AnyRoute = RouteDef<string, string, z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined>;

/**
 * A route as its module declares it: the router and the OpenAPI document read it as `AnyRoute`;
 * the console's API client (app/_server/console-next.ts) reads its types, so that a request and
 * a response have one shape, the schemas'.
 */
export type TypedRoute<O extends string, P extends string, B, Q, S> = AnyRoute & {
  readonly operationId: O;
  readonly path: P;
  /** Types only: never set. */
  readonly types?: { body: B; query: Q; response: S };
};

/**
 * Declares a route with its body and query types flowing into the handler. Its body type for
 * callers is `body`'s, else `bodyDoc`'s (a body the handler validates itself is still typed).
 */
export function route<
  const O extends string,
  const P extends string,
  B extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  S extends z.ZodType | undefined = undefined,
  D extends z.ZodType | undefined = undefined,
>(def: RouteDef<O, P, B, Q, S, D>): TypedRoute<O, P, B extends z.ZodType ? B : D, Q, S> {
  return def as unknown as TypedRoute<O, P, B extends z.ZodType ? B : D, Q, S>;
}

/** Names of the schemas that appear in the OpenAPI document's components. */
export const SCHEMA_NAMES = new Map<z.ZodType, string>();

export function named<S extends z.ZodType>(name: string, schema: S): S {
  SCHEMA_NAMES.set(schema, name);
  return schema;
}

export function actorFor(request: HttpRequest, user: User, address: string): Actor {
  return { type: "user", id: user.id, ip: address, userAgent: request.headers.get("user-agent") };
}
