import { z } from "zod";
import { USER_CLAIMS } from "./claims";
import { InvalidRequest, UnmetAuthenticationRequirements } from "@/lib/protocol/errors";
import { ACR_VALUES } from "@/lib/protocol/vocabulary";

/**
 * The `claims` request parameter (OpenID Connect Core 5.5), reduced to what Torii acts on: the
 * user claims asked for in the ID token and at userinfo, and the subjects a `sub` request allows.
 * Claims Torii does not have are dropped (Core 5.5: not understood, ignored); `essential` changes
 * nothing for them, since Torii releases every requested claim it has.
 */
export type ClaimsRequest = {
  /** User claims (lib/oauth/claims.ts USER_CLAIMS) to put in the ID token, whatever the scope. */
  idToken: string[];
  /** User claims userinfo returns, whatever the scope. */
  userinfo: string[];
  /**
   * Set when `sub` was requested with `value`/`values`: only one of these users may be issued
   * for (Core 5.5.1: never an ID token or access token for a different user).
   */
  subjects: string[] | null;
  /**
   * The classes an essential `acr` request with `value`/`values` accepts, of those Torii has
   * (lib/protocol/vocabulary.ts ACR); null when the request has none.
   */
  acr?: string[] | null;
};

/** What a grant remembers of the request, so that refreshes and userinfo keep delivering it. */
export type GrantClaims = Pick<ClaimsRequest, "idToken" | "userinfo">;

/** Longer than any sensible request for the dozen claims Torii has; keeps parsing cheap. */
export const CLAIMS_PARAMETER_MAX_LENGTH = 4096;

/** One claim's request: null ("default manner") or an object whose unknown members are ignored. */
const claimRequest = z.union([
  z.null(),
  z.looseObject({
    essential: z.boolean().optional(),
    value: z.unknown().optional(),
    values: z.array(z.unknown()).optional(),
  }),
]);
const member = z.record(z.string(), claimRequest).optional();
const claimsParameter = z.looseObject({ userinfo: member, id_token: member });
type Member = z.infer<typeof member>;

const KNOWN = new Set<string>(USER_CLAIMS);
const known = (m: Member) => Object.keys(m ?? {}).filter((name) => KNOWN.has(name));

/**
 * Parses and checks the parameter. Malformed JSON or a wrong shape is `invalid_request`; so is a
 * `userinfo` member with a response type that issues no access token (Core 5.5). An essential
 * `acr` with values none of which Torii has cannot be met, which Core 5.5.1.1 says to treat as a
 * failed authentication: `unmet_authentication_requirements` (the errata's code for exactly this);
 * with values Torii has, the sign-in policy meets them or answers the same.
 */
export function parseClaimsParameter(value: string, opts: { issuesAccessToken: boolean }): ClaimsRequest {
  if (value.length > CLAIMS_PARAMETER_MAX_LENGTH) throw new InvalidRequest(`The claims parameter is longer than ${CLAIMS_PARAMETER_MAX_LENGTH} characters.`);
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    throw new InvalidRequest("The claims parameter is not valid JSON.");
  }
  const parsed = claimsParameter.safeParse(json);
  if (!parsed.success) {
    const at = parsed.error.issues[0]!.path.join(".");
    throw new InvalidRequest(`The claims parameter is malformed${at ? ` at ${at}` : ""}: it must be a JSON object whose userinfo and id_token members map claim names to null or to an object (essential: boolean, values: array).`);
  }
  const { userinfo, id_token } = parsed.data;
  if (userinfo && !opts.issuesAccessToken) {
    throw new InvalidRequest("The claims parameter asks for userinfo claims, but the response type issues no access token.");
  }
  const acr = id_token?.acr;
  let acrValues: string[] | null = null;
  if (acr?.essential && (acr.value !== undefined || acr.values !== undefined)) {
    const listed = [...(acr.value !== undefined ? [acr.value] : []), ...(acr.values ?? [])];
    // Authentication context class references are strings (OIDC Core 2); another value is a malformed request, not an unmet one.
    if (listed.some((v) => typeof v !== "string")) throw new InvalidRequest("The claims parameter's acr value and values must be strings.");
    acrValues = listed.filter((v): v is string => ACR_VALUES.includes(v as string));
    if (!acrValues.length) throw new UnmetAuthenticationRequirements("The requested authentication context class (acr) cannot be met.");
  }
  return { idToken: known(id_token), userinfo: known(userinfo), subjects: subjectsOf([id_token?.sub, userinfo?.sub]), acr: acrValues };
}

/** The users a `sub` request with `value` or `values` allows; each member's request must hold. */
function subjectsOf(requests: (z.infer<typeof claimRequest> | undefined)[]): string[] | null {
  let allowed: string[] | null = null;
  for (const r of requests) {
    if (!r || (r.value === undefined && r.values === undefined)) continue;
    const listed = [...(r.value !== undefined ? [r.value] : []), ...(r.values ?? [])];
    if (!listed.every((s): s is string => typeof s === "string")) throw new InvalidRequest("The claims parameter asks for a sub value that is not a string.");
    allowed = allowed === null ? listed : allowed.filter((s) => listed.includes(s));
  }
  if (allowed !== null && !allowed.length) throw new InvalidRequest("The claims parameter asks for contradictory sub values.");
  return allowed;
}

/** Whether a user may be issued for under the request's `sub` constraint. */
export function subjectAllowed(claims: Pick<ClaimsRequest, "subjects"> | null | undefined, userId: string): boolean {
  return !claims?.subjects || claims.subjects.includes(userId);
}
