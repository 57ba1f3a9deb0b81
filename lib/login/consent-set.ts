import { isProtocolScope } from "@/lib/oauth/scopes";
import type { Api } from "@/lib/store/apis";

/**
 * What a consent covers: the protocol's scopes (openid, profile, ...) and, per API (resource
 * identifier), that API's scopes. An API is a key even with no scope: access to the API itself
 * was allowed. API scope names are only unique within their API, so they are kept per API: a
 * scope allowed for one API does not count for another that defines the same name.
 */
export type ConsentSet = { scopes: readonly string[]; apis: Readonly<Record<string, readonly string[]>> };

/**
 * What an authorization request asks the user to allow: its protocol scopes, and for each
 * resource it names (lib/oauth/resources.ts resolved them at the authorization endpoint) the
 * requested scopes that API defines. An API no longer defined is left out: nothing of it can be
 * issued any more.
 */
export function askedConsent(scopes: readonly string[], resources: readonly string[], apis: readonly Pick<Api, "identifier" | "scopes">[]): ConsentSet {
  const byApi: Record<string, string[]> = {};
  for (const identifier of resources) {
    const api = apis.find((a) => a.identifier === identifier);
    if (!api) continue;
    byApi[identifier] = scopes.filter((s) => !isProtocolScope(s) && api.scopes.some((d) => d.name === s));
  }
  return { scopes: scopes.filter(isProtocolScope), apis: byApi };
}

/** Whether what was allowed (`given`) covers what is asked: every protocol scope, every API and each of its scopes. */
export function coversConsent(given: ConsentSet | undefined, asked: ConsentSet): boolean {
  if (!given) return false;
  if (!asked.scopes.every((s) => given.scopes.includes(s))) return false;
  return Object.entries(asked.apis).every(([api, scopes]) => {
    const allowed = given.apis[api];
    return allowed !== undefined && scopes.every((s) => allowed.includes(s));
  });
}

/** The union of two consents, in a stable (sorted) order: a later request for less asks nothing. */
export function mergeConsent(a: ConsentSet | undefined, b: ConsentSet): { scopes: string[]; apis: Record<string, string[]> } {
  const union = (x: readonly string[] = [], y: readonly string[] = []) => [...new Set([...x, ...y])].sort();
  const apis: Record<string, string[]> = {};
  for (const key of [...new Set([...Object.keys(a?.apis ?? {}), ...Object.keys(b.apis)])].sort()) apis[key] = union(a?.apis[key], b.apis[key]);
  return { scopes: union(a?.scopes, b.scopes), apis };
}
