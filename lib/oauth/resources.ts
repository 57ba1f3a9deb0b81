import { InvalidScope, InvalidTarget } from "@/lib/protocol/errors";
import type { Api } from "@/lib/store/apis";
import type { Client } from "@/lib/store/clients";
import { isProtocolScope } from "./scopes";

/**
 * RFC 8707 resource indicators: which API (resource server) an access token is for. The token's
 * `aud` is the API's identifier and its `scope` the API's scopes the client may have, plus the
 * protocol's own (openid, profile, ...). Without a resource, a request that names API scopes of
 * exactly one API the client may use is for that API; one that names none is as before (the
 * audience is the client itself).
 */

export type Target = { api: Api; scopes: string[] };

/** The resource indicators of a token request: `resource`, and `audience` as its synonym. */
export function resourcesOf(form: ReadonlyMap<string, string>): string[] {
  return [...(form.get("resource")?.split(" ") ?? []), ...(form.get("audience")?.split(" ") ?? [])];
}

/** RFC 8707 2: a resource (an API's identifier) is an absolute URI without a fragment. */
export function isResourceIdentifier(value: string): boolean {
  if (value.includes("#")) return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/** Anything but an absolute URI without a fragment is `invalid_target`. */
export function checkResourceValues(values: readonly string[]): void {
  if (!values.every(isResourceIdentifier)) throw new InvalidTarget("A resource must be an absolute URI without a fragment.");
}

/** The API scopes the client may ask for at `api`: registered for the client and still defined by the API. */
export function allowedApiScopes(client: Pick<Client, "apiScopes">, api: Api): string[] {
  const defined = new Set(api.scopes.map((s) => s.name));
  return (client.apiScopes[api.identifier] ?? []).filter((s) => defined.has(s));
}

/**
 * Resolves the target of a token or authorization request. `resources` are the `resource` (or
 * `audience`) values; `requested` the scope values. `allByDefault`: with no API scope requested,
 * grant all the client may have (client credentials, where the registration is the permission
 * model). Throws `invalid_target` for an unknown or not allowed resource, `invalid_scope` for API
 * scopes the client may not have.
 */
export function resolveTarget(
  apis: readonly Api[],
  client: Pick<Client, "apiScopes">,
  resources: readonly string[],
  requested: readonly string[],
  opts: { allByDefault: boolean },
): { target: Target | null; protocolScopes: string[] } {
  checkResourceValues(resources);
  const unique = [...new Set(resources)];
  if (unique.length > 1) throw new InvalidTarget("Ask for one resource per request.");
  const protocolScopes = requested.filter(isProtocolScope);
  const apiScopes = requested.filter((s) => !isProtocolScope(s));
  let api: Api | undefined;
  if (unique.length) {
    api = apis.find((a) => a.identifier === unique[0]);
    if (!api || !(api.identifier in client.apiScopes)) throw new InvalidTarget("The resource is unknown or not allowed for this client.");
  } else if (apiScopes.length) {
    const candidates = apis.filter((a) => a.identifier in client.apiScopes && apiScopes.every((s) => a.scopes.some((d) => d.name === s)));
    if (candidates.length !== 1) throw new InvalidScope(`Unknown scope: ${apiScopes.join(" ")}; name the API with the resource parameter.`);
    api = candidates[0];
  }
  if (!api) return { target: null, protocolScopes };
  const allowed = allowedApiScopes(client, api);
  const refused = apiScopes.filter((s) => !allowed.includes(s));
  if (refused.length) throw new InvalidScope(`Scope not allowed for this client at ${api.identifier}: ${refused.join(" ")}.`);
  return { target: { api, scopes: apiScopes.length || !opts.allByDefault ? apiScopes : allowed }, protocolScopes };
}

/**
 * At the authorization endpoint (RFC 8707 2.1): the APIs the grant covers, several allowed, and
 * the scopes it asks for. Each resource must be an API the client may use; each API scope must be
 * one the client may have at one of them. Without a resource, API scopes name their API when
 * exactly one API the client may use defines them all. Without either, the grant covers no API.
 *
 * Scope values nothing here understands (neither a protocol scope nor a scope of an API the client
 * may use) are left out rather than refused: OIDC Core 3.1.2.1 says they SHOULD be ignored, and
 * relying parties send generic lists (`groups`, another provider's scopes). The granted `scope` in
 * the token response then tells the client what it got (RFC 6749 §3.3).
 */
export function resolveGrantResources(
  apis: readonly Api[],
  client: Pick<Client, "apiScopes">,
  resources: readonly string[],
  asked: readonly string[],
): { resources: string[]; scopes: string[] } {
  const usable = apis.filter((a) => a.identifier in client.apiScopes);
  const requested = asked.filter((s) => isProtocolScope(s) || usable.some((a) => a.scopes.some((d) => d.name === s)));
  checkResourceValues(resources);
  const named = [...new Set(resources)].map((r) => {
    const api = apis.find((a) => a.identifier === r);
    if (!api || !(api.identifier in client.apiScopes)) throw new InvalidTarget("The resource is unknown or not allowed for this client.");
    return api;
  });
  const apiScopes = requested.filter((s) => !isProtocolScope(s));
  if (!named.length && apiScopes.length) return inferred(apis, client, requested);
  const refused = apiScopes.filter((s) => !named.some((api) => allowedApiScopes(client, api).includes(s)));
  if (refused.length) throw new InvalidScope(`Scope not allowed for this client at the requested resources: ${refused.join(" ")}.`);
  return { resources: named.map((a) => a.identifier), scopes: [...requested] };
}

function inferred(apis: readonly Api[], client: Pick<Client, "apiScopes">, requested: readonly string[]): { resources: string[]; scopes: string[] } {
  const { target } = resolveTarget(apis, client, [], requested, { allByDefault: false });
  return { resources: target ? [target.api.identifier] : [], scopes: [...requested] };
}

/**
 * At the token endpoint, for a grant made at the authorization endpoint: which of the grant's
 * APIs this access token is for (RFC 8707 2.2). A `resource` must be one the grant covers
 * (`invalid_target` otherwise); without one, the first API the grant names that still exists. The
 * token's API scopes are the grant's scopes defined there that the client may still have. Null:
 * the grant covers no API, and the token is for the client as before.
 */
export function tokenTarget(
  apis: readonly Api[],
  client: Pick<Client, "apiScopes">,
  grant: { resources: readonly string[]; scopes: readonly string[] },
  requestedResources: readonly string[],
): Target | null {
  checkResourceValues(requestedResources);
  const unique = [...new Set(requestedResources)];
  if (unique.length > 1) throw new InvalidTarget("Ask for one resource per token request.");
  const asked = unique[0];
  let api: Api | undefined;
  if (asked !== undefined) {
    if (!grant.resources.includes(asked)) throw new InvalidTarget("The resource is not one this grant covers.");
    api = apis.find((a) => a.identifier === asked && a.identifier in client.apiScopes);
    if (!api) throw new InvalidTarget("The resource no longer exists or is no longer allowed for this client.");
  } else {
    api = grant.resources.map((r) => apis.find((a) => a.identifier === r && a.identifier in client.apiScopes)).find(Boolean);
  }
  if (!api) return null;
  const allowed = allowedApiScopes(client, api);
  return { api, scopes: grant.scopes.filter((s) => allowed.includes(s)) };
}

/** The scopes of an access token for `target`: the protocol scopes asked for, plus the API's. */
export function accessTokenScopes(scopes: readonly string[], target: Target | null): string[] {
  return target ? [...scopes.filter(isProtocolScope), ...target.scopes] : [...scopes];
}

/** An API as the consent page shows it: its name, and each asked scope with its text in the user's locale. */
export type ConsentApiGroup = { identifier: string; name: string; scopes: { name: string; description: string }[] };

/**
 * The consent page's API groups for `asked` (API identifier -> scopes, lib/login/consent-set.ts):
 * each API by name with its scopes' descriptions in `locale`, else in the API's default text,
 * else the scope's name. APIs no longer defined are left out.
 */
export function consentApiGroups(apis: readonly Api[], asked: Readonly<Record<string, readonly string[]>>, locale: string): ConsentApiGroup[] {
  return Object.entries(asked).flatMap(([identifier, scopes]) => {
    const api = apis.find((a) => a.identifier === identifier);
    if (!api) return [];
    return [
      {
        identifier,
        name: api.name,
        scopes: scopes.map((name) => {
          const s = api.scopes.find((d) => d.name === name);
          return { name, description: s?.descriptions?.[locale as keyof NonNullable<typeof s.descriptions>] || s?.description || name };
        }),
      },
    ];
  });
}
