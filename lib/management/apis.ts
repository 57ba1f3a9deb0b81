import { OptionalPageQuery, pageOf } from "./paging";
import { dateOf } from "@/lib/clock";
import { z } from "zod";
import { API_CHANGED, assignRole, deleteApi, insertApi, listApis, readApi, roleHolderPage, roleHolders, rolesOf, rotateApiSecret, setRoles, unassignRole, updateApi, type Api } from "@/lib/store/apis";
import { listClientIds } from "@/lib/store/clients";
import { listUserIds, userIdsByUsername } from "@/lib/store/users";
import { recordAudit } from "@/lib/store/audit";
import { clientChanged, readClient } from "@/lib/store/clients";
import { mutate } from "@/lib/store/invalidation";
import { readSettings } from "@/lib/store/settings";
import { getUser } from "@/lib/store/users";
import { ACCESS_TOKEN_FORMATS } from "@/lib/protocol/vocabulary";
import { LOCALES } from "@/lib/i18n/locales";
import { isProtocolScope } from "@/lib/oauth/scopes";
import { isResourceIdentifier } from "@/lib/oauth/resources";
import { publicKeySet } from "./public-keys";
import { problem } from "@/lib/problem";
import { addProblem, conflict, invalidFields, notFound, type FieldError } from "./http";
import { named, route, type Ctx } from "./route";
import { shownText } from "@/lib/text/shown-text";

/**
 * API resources (RFC 8707): what an access token can be for. Identifier (the tokens' `aud`),
 * scopes, roles, token format and lifetime, and the API's own introspection secret.
 */

const DAY = 86_400;
// RFC 6749 3.3 scope-token, minus the protocol's own names (an API cannot redefine openid).
const SCOPE_NAME = /^[\x21\x23-\x5B\x5D-\x7E]{1,100}$/;
const ROLE_KEY = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/;

const identifier = z
  .string()
  .max(2048)
  .superRefine((v, ctx) => {
    if (!isResourceIdentifier(v)) addProblem(ctx, problem("api_identifier_invalid", "Must be an absolute URI without a fragment, such as https://api.example.com."));
  });

const scopeList = z
  .array(
    z.strictObject({
      name: z.string().superRefine((v, ctx) => {
        if (!SCOPE_NAME.test(v)) addProblem(ctx, problem("scope_name_invalid", "A scope name is 1 to 100 printable characters without spaces, quotes or backslashes."));
        else if (isProtocolScope(v)) addProblem(ctx, problem("scope_name_reserved", `${v} is a scope of the protocol itself.`));
      }),
      description: z.string().max(500).default(""),
      /** The consent page's text per locale (`description` where a locale has none). */
      descriptions: z.partialRecord(z.enum(LOCALES), z.string().max(500)).optional(),
    }),
  )
  .max(100)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((s, i) => {
      if (seen.has(s.name)) addProblem(ctx, problem("scope_duplicate", "Each scope is named once."), [i, "name"]);
      seen.add(s.name);
    });
  });

const roleList = z
  .array(
    z.strictObject({
      key: z.string().superRefine((v, ctx) => {
        if (!ROLE_KEY.test(v)) addProblem(ctx, problem("role_key_invalid", "A role key is letters, digits, _ . : - (up to 100)."));
      }),
      name: shownText(200).min(1),
      description: z.string().max(500).default(""),
    }),
  )
  .max(100)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((r, i) => {
      if (seen.has(r.key)) addProblem(ctx, problem("role_duplicate", "Each role key is used once."), [i, "key"]);
      seen.add(r.key);
    });
  });

const apiFields = {
  name: shownText(200).min(1),
  scopes: scopeList,
  roles: roleList,
  accessTokenType: z.enum(ACCESS_TOKEN_FORMATS),
  /** Seconds. */
  accessTokenLifetime: z.number().int().min(1).max(7 * DAY),
  /** Public keys for private_key_jwt at introspection (iss = sub = the identifier). */
  jwks: publicKeySet.nullable(),
};

const ApiCreate = named(
  "ApiCreate",
  z.strictObject({
    identifier,
    ...apiFields,
    scopes: apiFields.scopes.default([]),
    roles: apiFields.roles.default([]),
    accessTokenType: apiFields.accessTokenType.default("jwt"),
    accessTokenLifetime: apiFields.accessTokenLifetime.optional(),
    jwks: apiFields.jwks.optional(),
  }),
);
const ApiPatch = named(
  "ApiPatch",
  z.strictObject({
    ...apiFields,
    identifier: z.string().describe("Cannot change: tokens, consents and client registrations name the API by it. Sending the current value is accepted; another is the field error identifier_immutable."),
  }).partial(),
);

const iso = z.iso.datetime();
const ApiView = named(
  "Api",
  z.object({
    apiId: z.string(),
    identifier: z.string(),
    name: z.string(),
    scopes: z.array(z.object({ name: z.string(), description: z.string(), descriptions: z.partialRecord(z.enum(LOCALES), z.string()).optional() })),
    roles: z.array(z.object({ key: z.string(), name: z.string(), description: z.string() })),
    accessTokenType: z.enum(ACCESS_TOKEN_FORMATS),
    accessTokenLifetime: z.number().int(),
    hasSecret: z.boolean(),
    jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).nullable(),
    createdAt: iso,
    updatedAt: iso,
  }),
);
const ApiList = named("ApiList", z.object({ apis: z.array(ApiView), total: z.number().int().describe("How many APIs there are in all.") }));
const ApiSecret = named("ApiSecret", z.object({ apiId: z.string(), identifier: z.string(), clientSecret: z.string().describe("Shown once. The API authenticates to /oauth/v2/introspect with HTTP Basic: its identifier and this secret.") }));

const RoleHolders = named(
  "RoleHolders",
  z.strictObject({
    userIds: z.array(z.string()).max(1000).default([]),
    clientIds: z.array(z.string()).max(1000).default([]),
  }),
);
const RoleHolderChange = named(
  "RoleHolderChange",
  z.strictObject({
    userIds: z.array(z.string()).max(1000).default([]),
    usernames: z
      .array(z.string().trim().min(1).max(200))
      .max(1000)
      .default([])
      .describe("Users by login name (case-insensitive), e.g. from a list an administrator pasted."),
    clientIds: z.array(z.string()).max(1000).default([]),
  }),
);
const RoleHolderQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});
const RoleHolderPage = named(
  "RoleHolderPage",
  z.object({
    holders: z.array(
      z.object({
        kind: z.enum(["user", "client"]),
        id: z.string(),
        name: z.string().describe("The user's login name or the client's name."),
      }),
    ),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  }),
);

/** `{[apiIdentifier]: roleKeys[]}`, as users and clients carry roles. */
export const RoleMap = named("RoleMap", z.record(z.string(), z.array(z.string()).max(100)));

function apiView(a: Api): z.infer<typeof ApiView> {
  return {
    apiId: a.id,
    identifier: a.identifier,
    name: a.name,
    scopes: a.scopes,
    roles: a.roles,
    accessTokenType: a.accessTokenType as "jwt" | "opaque",
    accessTokenLifetime: a.accessTokenLifetime,
    hasSecret: a.secretHash !== null,
    jwks: a.jwks ?? null,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}

async function load(ctx: Ctx): Promise<Api> {
  const api = await readApi(ctx.db, ctx.params.apiId!);
  if (!api) throw notFound("API");
  return api;
}

async function loadRole(ctx: Ctx): Promise<{ api: Api; roleKey: string }> {
  const api = await load(ctx);
  const roleKey = ctx.params.roleKey!;
  if (!api.roles.some((r) => r.key === roleKey)) throw notFound("role");
  return { api, roleKey };
}

/**
 * Every id must name an existing user or client and every login name a user: unknown ones are
 * field errors (`user_unknown`, `username_unknown`, `client_unknown`) and nothing changes.
 * Returns the holders by id, login names resolved.
 */
async function checkHolders(ctx: Ctx, body: z.infer<typeof RoleHolderChange>): Promise<{ userIds: string[]; clientIds: string[] }> {
  const users = new Set(await listUserIds(ctx.db, body.userIds));
  const byName = await userIdsByUsername(ctx.db, body.usernames);
  const clients = new Set(await listClientIds(ctx.db, body.clientIds));
  const problems: FieldError[] = [
    ...body.userIds.flatMap((id, i) => (users.has(id) ? [] : [{ path: `userIds.${i}`, code: "user_unknown", message: `No user has the id ${id}.` }])),
    ...body.usernames.flatMap((name, i) =>
      byName.has(name) ? [] : [{ path: `usernames.${i}`, code: "username_unknown", message: `No user has the login name ${name}.`, params: { username: name } }],
    ),
    ...body.clientIds.flatMap((id, i) => (clients.has(id) ? [] : [{ path: `clientIds.${i}`, code: "client_unknown", message: `No client has the id ${id}.` }])),
  ];
  if (problems.length) throw invalidFields(problems);
  return { userIds: [...new Set([...body.userIds, ...byName.values()])], clientIds: [...new Set(body.clientIds)] };
}

/**
 * `{[apiIdentifier]: roleKeys[]}` checked against the APIs: unknown APIs and role keys are field
 * errors with codes. Returns the same map keyed by API id.
 */
export async function checkRoleMap(ctx: Ctx, map: Record<string, string[]>): Promise<Record<string, string[]>> {
  const apis = await listApis(ctx.db);
  const problems: FieldError[] = [];
  const byId: Record<string, string[]> = {};
  for (const [ident, keys] of Object.entries(map)) {
    const api = apis.find((a) => a.identifier === ident);
    if (!api) {
      problems.push({ path: ident, code: "api_unknown", message: `No API has the identifier ${ident}.` });
      continue;
    }
    keys.forEach((k, i) => {
      if (!api.roles.some((r) => r.key === k)) problems.push({ path: `${ident}.${i}`, code: "role_unknown", message: `${api.name} has no role ${k}.` });
    });
    byId[api.id] = keys;
  }
  if (problems.length) throw invalidFields(problems);
  return byId;
}

/** Role keys by API id, as `{[apiIdentifier]: roleKeys[]}`. */
export async function roleMapView(ctx: Ctx, byApiId: Record<string, string[]>): Promise<Record<string, string[]>> {
  const apis = await listApis(ctx.db);
  const out: Record<string, string[]> = {};
  for (const api of apis) if (byApiId[api.id]?.length) out[api.identifier] = byApiId[api.id]!;
  return out;
}

export const apiRoutes = [
  route({
    method: "POST",
    path: "/apis",
    operationId: "createApi",
    summary: "Describe an API (resource server): access tokens for it carry its identifier as aud.",
    tag: "apis",
    body: ApiCreate,
    success: { status: 201, description: "The API.", schema: ApiView },
    errors: [409],
    async handler(ctx, body) {
      const settings = (await readSettings(ctx.db))!;
      const existing = (await listApis(ctx.db)).some((a) => a.identifier === body.identifier);
      if (existing) throw conflict("Another API has this identifier.", [{ path: "identifier", code: "api_identifier_taken", message: "Another API has this identifier." }]);
      const api = await mutate(ctx.inst, [API_CHANGED], async (tx) => {
        const created = await insertApi(tx, { ...body, accessTokenLifetime: body.accessTokenLifetime ?? settings.lifetimes.accessToken });
        await recordAudit(tx, ctx.actor, { action: "api.created", targetType: "api", targetId: created.id, details: { identifier: created.identifier } });
        return created;
      });
      return apiView(api);
    },
  }),
  route({
    method: "GET",
    path: "/apis",
    operationId: "listApis",
    summary: "List the APIs (oldest first), all or one page (limit, offset).",
    tag: "apis",
    query: OptionalPageQuery,
    success: { status: 200, description: "The APIs, or one page of them.", schema: ApiList },
    async handler(ctx, _body, q) {
      const { items, total } = pageOf(await listApis(ctx.db), q);
      return { apis: items.map(apiView), total };
    },
  }),
  route({
    method: "GET",
    path: "/apis/{apiId}",
    operationId: "getApi",
    summary: "One API.",
    tag: "apis",
    success: { status: 200, description: "The API.", schema: ApiView },
    errors: [404],
    async handler(ctx) {
      return apiView(await load(ctx));
    },
  }),
  route({
    method: "PATCH",
    path: "/apis/{apiId}",
    operationId: "updateApi",
    summary: "Change an API (its identifier stays: tokens and clients name it). Roles removed here are taken from everyone who held them.",
    tag: "apis",
    body: ApiPatch,
    success: { status: 200, description: "The API.", schema: ApiView },
    errors: [404],
    async handler(ctx, { identifier, ...patch }) {
      const current = await load(ctx);
      // Issued tokens carry it as aud, consents and clients' apiScopes are keyed by it: a new
      // identifier is a new API (create one, move the clients, delete this one).
      if (identifier !== undefined && identifier !== current.identifier) {
        throw invalidFields([{ path: "identifier", code: "identifier_immutable", message: "The identifier of an API cannot change; create a new API instead." }]);
      }
      const api = await mutate(ctx.inst, [API_CHANGED, { cache: "accessTokens" }], async (tx) => {
        const updated = (await updateApi(tx, current.id, patch, dateOf(ctx.inst.clock)))!;
        await recordAudit(tx, ctx.actor, { action: "api.updated", targetType: "api", targetId: current.id, details: { fields: Object.keys(patch) } });
        return updated;
      });
      return apiView(api);
    },
  }),
  route({
    method: "DELETE",
    path: "/apis/{apiId}",
    operationId: "deleteApi",
    summary: "Delete an API: its roles go with it, clients stop naming it, and its tokens stop introspecting as active.",
    tag: "apis",
    success: { status: 204, description: "Deleted." },
    errors: [404],
    async handler(ctx) {
      const current = await load(ctx);
      await mutate(ctx.inst, [API_CHANGED, { cache: "accessTokens" }, { cache: "clients" }], async (tx) => {
        await deleteApi(tx, current.id, dateOf(ctx.inst.clock));
        await recordAudit(tx, ctx.actor, { action: "api.deleted", targetType: "api", targetId: current.id, details: { identifier: current.identifier } });
      });
      return undefined;
    },
  }),
  route({
    method: "POST",
    path: "/apis/{apiId}/secret",
    operationId: "rotateApiSecret",
    summary: "A new introspection secret for the API (the previous one stops working). Returned once.",
    tag: "apis",
    success: { status: 200, description: "The secret.", schema: ApiSecret },
    errors: [404],
    async handler(ctx) {
      const current = await load(ctx);
      const secret = await mutate(ctx.inst, [API_CHANGED], async (tx) => {
        const s = (await rotateApiSecret(tx, current.id, dateOf(ctx.inst.clock)))!;
        await recordAudit(tx, ctx.actor, { action: "api.secret_rotated", targetType: "api", targetId: current.id, details: {} });
        return s;
      });
      return { apiId: current.id, identifier: current.identifier, clientSecret: secret };
    },
  }),
  route({
    method: "GET",
    path: "/apis/{apiId}/roles/{roleKey}/holders",
    operationId: "getRoleHolders",
    summary: "The users and clients that hold one role of the API, paged: users by login name, then clients by name.",
    tag: "apis",
    query: RoleHolderQuery,
    success: { status: 200, description: "One page of holders.", schema: RoleHolderPage },
    errors: [404],
    async handler(ctx, _body, q) {
      const { api, roleKey } = await loadRole(ctx);
      const { holders, total } = await roleHolderPage(ctx.db, api.id, roleKey, q);
      return { holders, total, limit: q.limit, offset: q.offset };
    },
  }),
  ...(["POST", "DELETE"] as const).map((method) =>
    route({
      method,
      path: "/apis/{apiId}/roles/{roleKey}/holders",
      operationId: method === "POST" ? "assignRole" : "unassignRole",
      summary: method === "POST" ? "Give one role to many users and clients at once (those who hold it keep it)." : "Take one role from many users and clients at once.",
      tag: "apis",
      body: RoleHolderChange,
      success: { status: 200, description: "The ids of everyone who holds the role now.", schema: RoleHolders },
      errors: [404],
      async handler(ctx: Ctx, body: z.infer<typeof RoleHolderChange>) {
        const { api, roleKey } = await loadRole(ctx);
        const who = await checkHolders(ctx, body);
        await mutate(ctx.inst, [{ cache: "accessTokens" }], async (tx) => {
          await (method === "POST" ? assignRole : unassignRole)(tx, api.id, roleKey, who);
          await recordAudit(tx, ctx.actor, {
            action: method === "POST" ? "api.role_assigned" : "api.role_unassigned",
            targetType: "api",
            targetId: api.id,
            details: { roleKey, userIds: who.userIds, clientIds: who.clientIds },
          });
        });
        return roleHolders(ctx.db, api.id, roleKey);
      },
    }),
  ),
  ...holderRoleRoutes("users", "/users/{userId}/roles", "getUserRoles", "setUserRoles"),
  ...holderRoleRoutes("clients", "/clients/{clientId}/roles", "getClientRoles", "setClientRoles"),
];

/**
 * GET and PUT of the roles of a user or a client, `{[apiIdentifier]: roleKeys[]}`. Declared once
 * per holder kind with literal paths and operation ids, so that the console's typed client sees
 * each operation's own path parameter.
 */
function holderRoleRoutes<const P extends string, const G extends string, const S extends string>(kind: "users" | "clients", path: P, getId: G, setId: S) {
  const param = kind === "users" ? "userId" : "clientId";
  const holderOf = async (ctx: Ctx) => {
    const id = ctx.params[param]!;
    const exists = kind === "users" ? await getUser(ctx.db, id) : await readClient(ctx.db, id);
    if (!exists) throw notFound(kind === "users" ? "user" : "client");
    return kind === "users" ? { userId: id } : { clientId: id };
  };
  return [
    route({
      method: "GET",
      path,
      operationId: getId,
      summary: `The API roles of a ${kind === "users" ? "user" : "client (for client_credentials)"}: {apiIdentifier: roleKeys[]}.`,
      tag: "apis",
      success: { status: 200, description: "Role keys by API identifier.", schema: RoleMap },
      errors: [404],
      async handler(ctx: Ctx) {
        return roleMapView(ctx, await rolesOf(ctx.db, await holderOf(ctx)));
      },
    }),
    route({
      method: "PUT",
      path,
      operationId: setId,
      summary: "Replace the roles at each API named in the body; APIs not named keep their roles.",
      tag: "apis",
      body: RoleMap,
      success: { status: 200, description: "All role keys by API identifier.", schema: RoleMap },
      errors: [404],
      async handler(ctx: Ctx, body: Record<string, string[]>) {
        const holder = await holderOf(ctx);
        const byId = await checkRoleMap(ctx, body);
        await mutate(ctx.inst, [{ cache: "accessTokens" }, ...(kind === "clients" ? [clientChanged(ctx.params.clientId!)] : [])], async (tx) => {
          await setRoles(tx, holder, byId);
          await recordAudit(tx, ctx.actor, {
            action: `${kind === "users" ? "user" : "client"}.api_roles_changed`,
            targetType: kind === "users" ? "user" : "client",
            targetId: ctx.params[param]!,
            details: { roles: body },
          });
        });
        return roleMapView(ctx, await rolesOf(ctx.db, holder));
      },
    }),
  ] as const;
}
