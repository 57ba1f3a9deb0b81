import { apiRoutes } from "./apis";
import { mailRoutes } from "./mail";
import { auditRoutes } from "./audit";
import { brandingRoutes } from "./branding";
import { clientRoutes } from "./clients";
import { featureRoutes } from "./features";
import { keyRoutes } from "./keys";
import type { z } from "zod";
import type { AnyRoute, TypedRoute } from "./route";
import { settingsRoutes } from "./settings";
import { textRoutes } from "./texts";
import { userFactorRoutes } from "./user-factors";
import { userLockoutRoutes } from "./user-lockout";
import { userRoutes } from "./users";

const ROUTES = [
  ...clientRoutes,
  ...apiRoutes,
  ...mailRoutes,
  ...userRoutes,
  ...userLockoutRoutes,
  ...userFactorRoutes,
  ...featureRoutes,
  ...keyRoutes,
  ...settingsRoutes,
  ...brandingRoutes,
  ...auditRoutes,
  ...textRoutes,
];

/** Every management route: the router serves exactly these, and the OpenAPI document lists exactly these. */
export const API_ROUTES: AnyRoute[] = ROUTES;

type Route = (typeof ROUTES)[number];

type PathParams<P extends string> = P extends `${string}{${infer N}}${infer R}` ? N | PathParams<R> : never;

/** Every operation by its operationId, with the types of its body, query and response, from the route's schemas. */
export type ManagementOperations = {
  [R in Route as R["operationId"]]: R extends TypedRoute<string, infer P, infer B, infer Q, infer S>
    ? {
        /** The names of its `{name}` path parameters. */
        params: PathParams<P>;
        body: B extends z.ZodType ? z.input<B> : undefined;
        query: Q extends z.ZodType ? z.input<Q> : undefined;
        response: S extends z.ZodType ? z.output<S> : Record<string, never>;
      }
    : never;
};

export type OperationId = keyof ManagementOperations;

/** An operation's method and path (with `{name}` parameters), for a client that calls it by id. */
export function operation(id: OperationId): { method: AnyRoute["method"]; path: string } {
  const r = ROUTES.find((x) => x.operationId === id)!;
  return { method: r.method, path: r.path };
}
