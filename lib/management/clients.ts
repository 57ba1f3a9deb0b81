import { OptionalPageQuery, pageOf } from "./paging";
import { dateOf } from "@/lib/clock";
import { z } from "zod";
import { mutate } from "@/lib/store/invalidation";
import { ACCESS_TOKEN_FORMATS, CLIENT_AUTH_METHODS as AUTH_METHODS, GRANT_TYPES, RESPONSE_TYPES, SECRET_AUTH_METHODS } from "@/lib/protocol/vocabulary";
import { recordAudit } from "@/lib/store/audit";
import {
  clientChanged,
  deleteClient,
  generateClientSecret,
  insertClient,
  listClients,
  readClient,
  setClientSecret,
  updateClient,
  usesSecret,
  type Client,
  type NewClient,
} from "@/lib/store/clients";
import { listApis } from "@/lib/store/apis";
import { readSettings } from "@/lib/store/settings";
import { invalid, invalidFields, notFound, type FieldError } from "./http";
import { cutOffClient } from "@/lib/store/cut-off";
import { publicKeySet } from "./public-keys";
import { redirectUriList, webOriginList } from "./redirect-uris";
import { webOriginsOf } from "@/lib/oauth/cors";
import { named, route, type Ctx } from "./route";
import { shownText } from "@/lib/text/shown-text";

const DAY = 86_400;

const jwks = publicKeySet;

const lifetime = (max: number) => z.number().int().min(1).max(max);

const clientFields = {
  name: shownText(200).min(1),
  redirectUris: redirectUriList,
  postLogoutRedirectUris: redirectUriList,
  responseTypes: z.array(z.enum(RESPONSE_TYPES)).transform((l) => [...new Set(l)]),
  grantTypes: z
    .array(z.enum(GRANT_TYPES))
    .min(1)
    .transform((l) => [...new Set(l)]),
  authMethod: z.enum(AUTH_METHODS),
  jwks: jwks.nullable(),
  accessTokenType: z.enum(ACCESS_TOKEN_FORMATS),
  idTokenUserinfoAssertion: z.boolean(),
  /** Seconds. */
  accessTokenLifetime: lifetime(7 * DAY),
  idTokenLifetime: lifetime(7 * DAY),
  refreshTokenLifetime: lifetime(400 * DAY),
  apiScopes: z
    .record(z.string(), z.array(z.string()).max(100))
    .describe("The APIs (by identifier) and their scopes this client may ask tokens for (RFC 8707 resource). For client_credentials this is all it may have."),
  firstParty: z
    .boolean()
    .describe("First-party applications get the user's data without a consent screen; third-party ones (false) ask the user first."),
  allowedOrigins: webOriginList
    .nullable()
    .describe("Web origins whose pages may call the token, revocation, userinfo and introspection endpoints (CORS). null: the origins of the redirect URIs."),
};

export const ClientCreate = named(
  "ClientCreate",
  z.strictObject({
    ...clientFields,
    redirectUris: clientFields.redirectUris.optional(),
    postLogoutRedirectUris: clientFields.postLogoutRedirectUris.optional(),
    responseTypes: clientFields.responseTypes.optional(),
    grantTypes: clientFields.grantTypes.optional(),
    authMethod: clientFields.authMethod.default("client_secret_basic"),
    jwks: clientFields.jwks.optional(),
    accessTokenType: clientFields.accessTokenType.default("jwt"),
    idTokenUserinfoAssertion: clientFields.idTokenUserinfoAssertion.default(false),
    accessTokenLifetime: clientFields.accessTokenLifetime.optional(),
    idTokenLifetime: clientFields.idTokenLifetime.optional(),
    refreshTokenLifetime: clientFields.refreshTokenLifetime.optional(),
    allowedOrigins: clientFields.allowedOrigins.optional(),
    firstParty: clientFields.firstParty.default(true),
    apiScopes: clientFields.apiScopes.default({}),
  }),
);

const ClientPatch = named("ClientPatch", z.strictObject(clientFields).partial());

const iso = z.iso.datetime();

const ClientView = named(
  "Client",
  z.object({
    clientId: z.string(),
    name: z.string(),
    redirectUris: z.array(z.string()),
    postLogoutRedirectUris: z.array(z.string()),
    responseTypes: z.array(z.enum(RESPONSE_TYPES)),
    grantTypes: z.array(z.enum(GRANT_TYPES)),
    authMethod: z.enum(AUTH_METHODS),
    jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).nullable(),
    accessTokenType: z.enum(ACCESS_TOKEN_FORMATS),
    idTokenUserinfoAssertion: z.boolean(),
    accessTokenLifetime: z.number().int(),
    idTokenLifetime: z.number().int(),
    refreshTokenLifetime: z.number().int(),
    firstParty: z.boolean(),
    apiScopes: z.record(z.string(), z.array(z.string())),
    allowedOrigins: z.array(z.string()).nullable(),
    webOrigins: z.array(z.string()).describe("The origins in effect: allowedOrigins, or the origins of the redirect URIs when it is null."),
    /** Whether a secret is set; the secret itself is shown only when created. */
    hasSecret: z.boolean(),
    createdAt: iso,
    updatedAt: iso,
  }),
);

const ClientWithSecret = named(
  "ClientWithSecret",
  ClientView.extend({
    clientSecret: z.string().optional().describe("Shown once: on create, on a new secret, and when PATCH switches to a secret method."),
  }),
);
const ClientList = named("ClientList", z.object({ clients: z.array(ClientView), total: z.number().int().describe("How many clients there are in all.") }));
const ClientSecret = named("ClientSecret", z.object({ clientId: z.string(), clientSecret: z.string() }));

type View = z.infer<typeof ClientView>;

function clientView(c: Client): View {
  return {
    clientId: c.id,
    name: c.name,
    redirectUris: c.redirectUris,
    postLogoutRedirectUris: c.postLogoutRedirectUris,
    responseTypes: c.responseTypes as View["responseTypes"],
    grantTypes: c.grantTypes as View["grantTypes"],
    authMethod: c.authMethod as View["authMethod"],
    jwks: c.jwks ?? null,
    accessTokenType: c.accessTokenType as View["accessTokenType"],
    idTokenUserinfoAssertion: c.idTokenUserinfoAssertion,
    accessTokenLifetime: c.accessTokenLifetime,
    idTokenLifetime: c.idTokenLifetime,
    refreshTokenLifetime: c.refreshTokenLifetime,
    firstParty: c.firstParty,
    apiScopes: c.apiScopes,
    allowedOrigins: c.allowedOrigins,
    webOrigins: webOriginsOf(c),
    hasSecret: c.secretHash !== null,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

type Registration = Pick<
  NewClient,
  "redirectUris" | "postLogoutRedirectUris" | "responseTypes" | "grantTypes" | "authMethod" | "jwks"
>;

/**
 * Rules that span fields, checked on the whole registration (after a PATCH is merged), so that
 * no sequence of updates reaches a registration the protocol endpoints cannot honour.
 */
function registrationProblems(r: Registration): FieldError[] {
  const problems: FieldError[] = [];
  const rt = new Set(r.responseTypes);
  const gt = new Set(r.grantTypes);
  // OpenID Connect Dynamic Client Registration §2: the response type `code` is used with the
  // authorization_code grant, `id_token` and `id_token token` with implicit. Both directions are
  // enforced: a grant without its response type could never be started, and a response type
  // without its grant would be refused at the authorization endpoint.
  if (rt.has("code") && !gt.has("authorization_code")) {
    problems.push({ path: "grantTypes", code: "code_needs_authorization_code", message: "The response type code needs the grant type authorization_code." });
  }
  if ((rt.has("id_token") || rt.has("id_token token")) && !gt.has("implicit")) {
    problems.push({ path: "grantTypes", code: "id_token_needs_implicit", message: "The response types id_token and id_token token need the grant type implicit." });
  }
  if (gt.has("authorization_code") && !rt.has("code")) {
    problems.push({ path: "responseTypes", code: "authorization_code_needs_code", message: "The grant type authorization_code needs the response type code." });
  }
  if (gt.has("implicit") && !rt.has("id_token") && !rt.has("id_token token")) {
    problems.push({ path: "responseTypes", code: "implicit_needs_id_token", message: "The grant type implicit needs the response type id_token or id_token token." });
  }
  // A refresh token is only ever the by-product of another grant.
  if (gt.has("refresh_token") && gt.size === 1) {
    problems.push({ path: "grantTypes", code: "refresh_token_alone", message: "refresh_token needs another grant type that issues refresh tokens." });
  }
  // RFC 6749 §4.4: the client credentials grant is for clients that authenticate, and the token
  // endpoint takes it only with a secret (spec 5, SECRET_AUTH_METHODS): a client registered with
  // another method could never use it.
  if (gt.has("client_credentials") && r.authMethod && !(SECRET_AUTH_METHODS as readonly string[]).includes(r.authMethod)) {
    problems.push(
      r.authMethod === "none"
        ? { path: "authMethod", code: "client_credentials_needs_auth", message: "The grant type client_credentials needs client authentication; none is not allowed." }
        : {
            path: "authMethod",
            code: "client_credentials_needs_secret",
            message: "The grant type client_credentials is used with client_secret_basic or client_secret_post; for a key, use the JWT bearer grant (RFC 7523).",
          },
    );
  }
  // Interactive clients (any response type) come back through a redirect URI; others need none.
  if (rt.size > 0 && (r.redirectUris ?? []).length === 0) {
    problems.push({ path: "redirectUris", code: "redirect_uri_required", message: "A client with response types needs at least one redirect URI." });
  }
  if (r.authMethod === "private_key_jwt" && !r.jwks) {
    problems.push({ path: "jwks", code: "jwks_required", message: "private_key_jwt needs a public key set (jwks)." });
  }
  return problems;
}

const CODE_GRANTS = ["authorization_code"] as const;

/**
 * Response and grant types left out are derived from each other, so that the common cases need
 * neither: nothing given is a code-flow client; `grantTypes: ["client_credentials"]` alone is a
 * non-interactive client; `responseTypes: ["id_token"]` alone is an implicit client.
 */
function deriveTypes(responseTypes?: string[], grantTypes?: string[]): { responseTypes: string[]; grantTypes: string[] } {
  if (!responseTypes && !grantTypes) return { responseTypes: ["code"], grantTypes: [...CODE_GRANTS] };
  if (responseTypes && grantTypes) return { responseTypes, grantTypes };
  if (grantTypes) {
    const rt: string[] = [];
    if (grantTypes.includes("authorization_code")) rt.push("code");
    if (grantTypes.includes("implicit")) rt.push("id_token", "id_token token");
    return { responseTypes: rt, grantTypes };
  }
  const gt: string[] = [];
  if (responseTypes!.includes("code")) gt.push("authorization_code");
  if (responseTypes!.some((t) => t.startsWith("id_token"))) gt.push("implicit");
  return { responseTypes: responseTypes!, grantTypes: gt.length ? gt : [...CODE_GRANTS] };
}

async function load(ctx: Ctx): Promise<Client> {
  const client = await readClient(ctx.db, ctx.params.clientId!);
  if (!client) throw notFound("client");
  return client;
}

/** API scopes by API identifier, each API and scope checked against the API resources (field errors with codes). */
async function checkApiScopes(ctx: Ctx, map: Record<string, string[]>): Promise<Record<string, string[]>> {
  const apis = await listApis(ctx.db);
  const problems: FieldError[] = [];
  const out: Record<string, string[]> = {};
  for (const [ident, scopes] of Object.entries(map)) {
    const api = apis.find((a) => a.identifier === ident);
    if (!api) {
      problems.push({ path: `apiScopes.${ident}`, code: "api_unknown", message: `No API has the identifier ${ident}.` });
      continue;
    }
    scopes.forEach((sc, i) => {
      if (!api.scopes.some((d) => d.name === sc)) problems.push({ path: `apiScopes.${ident}.${i}`, code: "scope_unknown", message: `${api.name} has no scope ${sc}.` });
    });
    out[ident] = [...new Set(scopes)];
  }
  if (problems.length) throw invalidFields(problems);
  return out;
}

const withSecret = (c: Client, secret: string | null) => ({ ...clientView(c), ...(secret ? { clientSecret: secret } : {}) });

export const clientRoutes = [
  route({
    method: "POST",
    path: "/clients",
    operationId: "createClient",
    summary: "Register a client. The secret (secret methods only) is in this response and never again.",
    tag: "clients",
    body: ClientCreate,
    success: { status: 201, description: "The client, with clientSecret for secret methods.", schema: ClientWithSecret },
    async handler(ctx, body) {
      const settings = (await readSettings(ctx.db))!;
      const types = deriveTypes(body.responseTypes, body.grantTypes);
      const data: NewClient = {
        name: body.name,
        redirectUris: body.redirectUris ?? [],
        postLogoutRedirectUris: body.postLogoutRedirectUris ?? [],
        ...types,
        authMethod: body.authMethod,
        jwks: body.jwks ?? null,
        accessTokenType: body.accessTokenType,
        idTokenUserinfoAssertion: body.idTokenUserinfoAssertion,
        accessTokenLifetime: body.accessTokenLifetime ?? settings.lifetimes.accessToken,
        idTokenLifetime: body.idTokenLifetime ?? settings.lifetimes.idToken,
        refreshTokenLifetime: body.refreshTokenLifetime ?? settings.lifetimes.refreshToken,
        allowedOrigins: body.allowedOrigins ?? null,
        firstParty: body.firstParty,
        apiScopes: await checkApiScopes(ctx, body.apiScopes),
      };
      const problems = registrationProblems(data);
      if (problems.length) throw invalidFields(problems);
      const { client, secret } = await ctx.db.transaction(async (tx) => {
        const created = await insertClient(tx, data);
        await recordAudit(tx, ctx.actor, {
          action: "client.created",
          targetType: "client",
          targetId: created.client.id,
          clientId: created.client.id,
          details: { name: data.name, authMethod: data.authMethod },
        });
        return created;
      });
      return withSecret(client, secret);
    },
  }),
  route({
    method: "GET",
    path: "/clients",
    operationId: "listClients",
    summary: "List clients (oldest first), all or one page (limit, offset). Secrets are never included.",
    tag: "clients",
    query: OptionalPageQuery,
    success: { status: 200, description: "The clients, or one page of them.", schema: ClientList },
    async handler(ctx, _body, q) {
      const { items, total } = pageOf(await listClients(ctx.db), q);
      return { clients: items.map(clientView), total };
    },
  }),
  route({
    method: "GET",
    path: "/clients/{clientId}",
    operationId: "getClient",
    summary: "Get a client. The secret is never included.",
    tag: "clients",
    success: { status: 200, description: "The client.", schema: ClientView },
    errors: [404],
    async handler(ctx) {
      return clientView(await load(ctx));
    },
  }),
  route({
    method: "PATCH",
    path: "/clients/{clientId}",
    operationId: "updateClient",
    summary:
      "Change some fields of a client. Switching authMethod to a secret method issues a secret (returned once); switching away clears it.",
    tag: "clients",
    body: ClientPatch,
    success: { status: 200, description: "The updated client.", schema: ClientWithSecret },
    errors: [404],
    async handler(ctx, patch) {
      const current = await load(ctx);
      if (patch.apiScopes) patch.apiScopes = await checkApiScopes(ctx, patch.apiScopes);
      const merged = { ...current, ...patch };
      const problems = registrationProblems(merged);
      if (problems.length) throw invalidFields(problems);
      const hadSecret = usesSecret(current.authMethod);
      const needsSecret = usesSecret(merged.authMethod);
      // Between basic and post the secret stays; into a secret method a new one is made; out of one it is dropped.
      const secret = needsSecret && !(hadSecret && current.secretHash) ? generateClientSecret() : null;
      const client = await mutate(ctx.inst, [clientChanged(current.id)], async (tx) => {
        let c = await updateClient(tx, current.id, patch, dateOf(ctx.inst.clock));
        if (secret || (!needsSecret && current.secretHash)) c = await setClientSecret(tx, current.id, secret, dateOf(ctx.inst.clock));
        await recordAudit(tx, ctx.actor, {
          action: "client.updated",
          targetType: "client",
          targetId: current.id,
          clientId: current.id,
          details: { fields: Object.keys(patch), ...(secret ? { secretIssued: true } : {}) },
        });
        return c!;
      });
      return withSecret(client, secret);
    },
  }),
  route({
    method: "DELETE",
    path: "/clients/{clientId}",
    operationId: "deleteClient",
    summary: "Delete a client.",
    tag: "clients",
    success: { status: 204, description: "Deleted." },
    errors: [404],
    async handler(ctx) {
      const id = ctx.params.clientId!;
      await mutate(ctx.inst, [clientChanged(id), { cache: "accessTokens" }], async (tx) => {
        if (!(await deleteClient(tx, id))) throw notFound("client");
        await cutOffClient(tx, id, "client_deleted", dateOf(ctx.inst.clock));
        await recordAudit(tx, ctx.actor, { action: "client.deleted", targetType: "client", targetId: id, clientId: id });
      });
      return undefined;
    },
  }),
  route({
    method: "POST",
    path: "/clients/{clientId}/secret",
    operationId: "newClientSecret",
    summary: "Issue a new secret; the old one stops working at once. The secret is shown in this response only.",
    tag: "clients",
    success: { status: 200, description: "The new secret.", schema: ClientSecret },
    errors: [404],
    async handler(ctx) {
      const client = await load(ctx);
      if (!usesSecret(client.authMethod)) {
        throw invalid(`A client using ${client.authMethod} has no secret; switch authMethod to a secret method instead.`);
      }
      const secret = generateClientSecret();
      await mutate(ctx.inst, [clientChanged(client.id)], async (tx) => {
        await setClientSecret(tx, client.id, secret, dateOf(ctx.inst.clock));
        await recordAudit(tx, ctx.actor, {
          action: "client.secret_rotated",
          targetType: "client",
          targetId: client.id,
          clientId: client.id,
        });
      });
      return { clientId: client.id, clientSecret: secret };
    },
  }),
];
