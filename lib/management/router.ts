import { dateOf } from "@/lib/clock";
import { hasNul, isInputDataError } from "@/lib/http/text-input";
import { DATABASE_UNAVAILABLE, isDatabaseUnavailable } from "@/lib/db/unavailable";
import { clientAddress } from "@/lib/http/client-address";
import type { Engine } from "@/lib/engine";
import type { User } from "@/lib/store/users";
import { API_ROUTES } from "./api-routes";
import { authenticateAdmin, isActiveAdmin } from "./auth";
import { ApiError, errorResponse, invalid, invalidFields, jsonResponse, notFound, parseWith, readJsonBody } from "./http";
import { openApiDocument } from "./openapi";
import { actorFor, type AnyRoute, type Ctx } from "./route";
import type { HttpRequest } from "@/lib/http/request";

const MANAGEMENT_PREFIX = "/management/v1";

type Compiled = { route: AnyRoute; pattern: RegExp; names: string[] };

const COMPILED: Compiled[] = API_ROUTES.map((route) => {
  const names: string[] = [];
  const source = route.path.replace(/\{(\w+)\}/g, (_, name: string) => (names.push(name), "([^/]+)"));
  return { route, pattern: new RegExp(`^${source}$`), names };
});

function match(path: string, method: string): { route: AnyRoute; params: Record<string, string> } | { allow: string[] } {
  const allow: string[] = [];
  // HEAD is served as GET is, without the body (RFC 9110 9.3.2; the server drops it).
  const served = method === "HEAD" ? "GET" : method;
  for (const c of COMPILED) {
    const m = c.pattern.exec(path);
    if (!m) continue;
    if (c.route.method !== served) {
      allow.push(...(c.route.method === "GET" ? ["GET", "HEAD"] : [c.route.method]));
      continue;
    }
    const params: Record<string, string> = {};
    try {
      c.names.forEach((n, i) => (params[n] = decodeURIComponent(m[i + 1]!)));
    } catch {
      throw notFound();
    }
    // No stored name or id holds a NUL (lib/http/text-input.ts).
    if (Object.values(params).some(hasNul)) throw notFound();
    return { route: c.route, params };
  }
  return { allow };
}

const methodNotAllowed = (allow: string[]) =>
  new ApiError(405, "method_not_allowed", `Use ${allow.join(" or ")} here.`, undefined, { Allow: allow.join(", ") });

/**
 * The management REST API under /management/v1: one Web handler, served by server.ts directly
 * and by the App Router catch-all under `next dev`. Authentication comes before routing, so
 * that without a token nothing (not even which paths exist) is revealed, except the public
 * OpenAPI document.
 */
export function handleManagement(inst: Engine, request: HttpRequest): Promise<Response> {
  return serve(inst, request, async (path, url) => {
    if (path === "/openapi.json") {
      if (request.method !== "GET" && request.method !== "HEAD") throw methodNotAllowed(["GET", "HEAD"]);
      return jsonResponse(openApiDocument(inst), 200, { "Cache-Control": "no-cache" });
    }
    const user = await authenticateAdmin(request, inst.db, dateOf(inst.clock));
    return dispatchAuthenticated(request, path, url, inst, user);
  });
}

/**
 * The same route table, schemas and audit events for an administrator authenticated some other
 * way: the admin console calls this with the user of its console session (which it has checked
 * to hold the admin role), so the console has no second path to the data.
 */
export function dispatchManagement(inst: Engine, request: HttpRequest, admin: User): Promise<Response> {
  return serve(inst, request, async (path, url) => {
    if (!isActiveAdmin(admin)) {
      throw new ApiError(403, "forbidden", "The management API needs a user with the admin role.");
    }
    return dispatchAuthenticated(request, path, url, inst, admin);
  });
}

/** The path below the prefix without a trailing slash; ApiErrors as their response, anything else as a logged 500. */
async function serve(inst: Engine, request: HttpRequest, handle: (path: string, url: URL) => Promise<Response>): Promise<Response> {
  try {
    const url = new URL(request.url);
    let path = url.pathname.startsWith(MANAGEMENT_PREFIX) ? url.pathname.slice(MANAGEMENT_PREFIX.length) : url.pathname;
    if (path.length > 1 && path.endsWith("/")) path = path.slice(0, -1);
    return await handle(path, url);
  } catch (err) {
    if (err instanceof ApiError) return errorResponse(err);
    // A value the caller sent that the database refused (lib/http/text-input.ts) is the caller's error.
    if (isInputDataError(err)) return errorResponse(invalid("A value in the request cannot be processed."));
    if (isDatabaseUnavailable(err)) {
      inst.log.warn({ err, path: new URL(request.url).pathname }, "database unavailable");
      return errorResponse(new ApiError(503, "service_unavailable", DATABASE_UNAVAILABLE.message, undefined, { ...DATABASE_UNAVAILABLE.headers }));
    }
    inst.log.error({ err, path: new URL(request.url).pathname }, "management API error");
    return jsonResponse({ error: "server_error", message: "The server encountered an unexpected condition." }, 500);
  }
}

async function dispatchAuthenticated(request: HttpRequest, path: string, url: URL, inst: Engine, user: User): Promise<Response> {
  const found = match(path, request.method);
  if ("allow" in found) {
    if (found.allow.length) throw methodNotAllowed(found.allow);
    throw new ApiError(404, "not_found", `No such endpoint: ${request.method} ${MANAGEMENT_PREFIX}${path}.`);
  }
  const { route, params } = found;
  let rawBody: unknown = undefined;
  let body: unknown = undefined;
  if (route.body || route.bodyDoc) {
    rawBody = await readJsonBody(request);
    if (route.body) body = parseWith(route.body, rawBody);
  }
  const nulParam = [...url.searchParams].find(([k, v]) => hasNul(k) || hasNul(v));
  if (nulParam) throw invalidFields([{ path: nulParam[0], code: "nul_character", message: "Must not contain a NUL character." }]);
  const query = route.query ? parseWith(route.query, Object.fromEntries(url.searchParams)) : undefined;
  const ctx: Ctx = {
    request,
    inst,
    db: inst.db,
    user,
    actor: actorFor(request, user, clientAddress(request)),
    params,
    rawBody,
  };
  const result = await route.handler(ctx, body, query);
  return jsonResponse(result, route.success.status);
}
