import { isProtocolScope } from "@/lib/protocol/vocabulary";
import type { Api } from "@/lib/store/apis";
import type { ConsentSet } from "@/lib/store/consents";

export type { ConsentSet };

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
