import type { TokenEnv } from "./tokens";
import type { Client } from "@/lib/store/clients";
import { InvalidRequest, InvalidScope, RequestNotSupported, RequestUriNotSupported, UnauthorizedClient, UnsupportedResponseType } from "@/lib/protocol/errors";
import { authorizeFields, canonicalResponseType, type Prompt, type RawAuthorizeParams } from "./params/authorize";
import { parseClaimsParameter, type ClaimsRequest } from "./claims-request";
import { verifyIdTokenHint } from "./id-token-hint";
import { resolveGrantResources } from "./resources";
import { parseScopeTokens } from "./scopes";

/** A validated authorization request (everything after client_id and redirect_uri were trusted). */
export type ValidAuthorizeRequest = {
  responseType: "code" | "id_token" | "id_token token";
  scopes: string[];
  /** The APIs (identifiers) the grant covers (RFC 8707). */
  resources: string[];
  state: string | null;
  nonce: string | null;
  codeChallenge: string | null;
  codeChallengeMethod: "S256" | null;
  prompt: Prompt[];
  maxAge: number | null;
  loginHint: string | null;
  hintSubject: string | null;
  /** `acr_values` (OIDC Core 3.1.2.1), then the values of an essential `acr` claim: what the policy must meet. */
  acrValues: string[];
  /** The `claims` parameter (OIDC Core 5.5), null when absent. */
  claims: ClaimsRequest | null;
};

/**
 * The checks that follow a trusted client and redirect URI, in the order of the spec's error
 * table; each failure is a typed OAuth error delivered to the redirect URI.
 */
export async function validateAuthorizeRequest(
  raw: RawAuthorizeParams,
  client: Client,
  ctx: TokenEnv,
): Promise<ValidAuthorizeRequest> {
  const v = raw.values;
  if (v.request !== undefined) throw new RequestNotSupported("The request parameter is not supported.");
  if (v.request_uri !== undefined) throw new RequestUriNotSupported("The request_uri parameter is not supported.");
  if (raw.repeated.length) throw new InvalidRequest(`Parameter repeated: ${raw.repeated.join(", ")}.`);

  if (!v.response_type) throw new InvalidRequest("The response_type parameter is missing.");
  const responseType = canonicalResponseType(v.response_type);
  if (!responseType) throw new UnsupportedResponseType(`The response type "${v.response_type}" is not supported.`);
  if (!client.responseTypes.includes(responseType)) {
    throw new UnauthorizedClient(`The client is not registered for the response type "${responseType}".`);
  }
  const implicit = responseType !== "code";

  if (v.scope === undefined || v.scope.trim() === "") throw new InvalidRequest("The scope parameter is missing.");
  const tokens = parseScopeTokens(v.scope);
  if (!tokens.includes("openid")) throw new InvalidScope("The scope must contain openid.");
  // API scopes and resource indicators: invalid_scope / invalid_target (resources.ts).
  const { resources, scopes } = resolveGrantResources(await ctx.store.apis.list(), client, raw.resources, tokens);
  // No refresh token ever leaves the authorization endpoint.
  const granted = implicit ? scopes.filter((s) => s !== "offline_access") : scopes;

  if (v.state !== undefined && !authorizeFields.state.safeParse(v.state).success) throw new InvalidRequest("The state is too long.");
  if (v.nonce !== undefined && !authorizeFields.nonce.safeParse(v.nonce).success) throw new InvalidRequest("The nonce is invalid.");
  if (implicit && !v.nonce) throw new InvalidRequest("The nonce parameter is required for the implicit flow.");

  let codeChallenge: string | null = null;
  let codeChallengeMethod: "S256" | null = null;
  if (!implicit) {
    if (v.code_challenge === undefined && v.code_challenge_method !== undefined) {
      throw new InvalidRequest("code_challenge_method was sent without code_challenge.");
    }
    if (v.code_challenge !== undefined) {
      // RFC 7636 4.3: an absent method means "plain", which Torii does not accept.
      if (v.code_challenge_method !== "S256") throw new InvalidRequest("The code_challenge_method must be S256.");
      if (!authorizeFields.codeChallenge.safeParse(v.code_challenge).success) throw new InvalidRequest("The code_challenge is malformed.");
      codeChallenge = v.code_challenge;
      codeChallengeMethod = "S256";
    } else if (client.authMethod === "none") {
      throw new InvalidRequest("PKCE is required: send code_challenge and code_challenge_method=S256.");
    }
  }

  let prompt: Prompt[] = [];
  if (v.prompt !== undefined) {
    const p = authorizeFields.prompt.safeParse(v.prompt);
    if (!p.success) throw new InvalidRequest("The prompt parameter is invalid.");
    prompt = p.data;
  }
  let maxAge: number | null = null;
  if (v.max_age !== undefined) {
    const m = authorizeFields.maxAge.safeParse(v.max_age);
    if (!m.success) throw new InvalidRequest("max_age must be a non-negative number of seconds.");
    maxAge = m.data;
  }
  if (v.login_hint !== undefined && !authorizeFields.loginHint.safeParse(v.login_hint).success) {
    throw new InvalidRequest("The login_hint is too long.");
  }
  if (v.acr_values !== undefined && v.acr_values.length > 1024) throw new InvalidRequest("The acr_values parameter is too long.");
  const claims = v.claims !== undefined ? parseClaimsParameter(v.claims, { issuesAccessToken: responseType !== "id_token" }) : null;
  const hintSubject = v.id_token_hint !== undefined ? await idTokenHintSubject(v.id_token_hint, client, ctx) : null;

  return {
    responseType,
    scopes: granted,
    resources,
    state: v.state ?? null,
    nonce: v.nonce ?? null,
    codeChallenge,
    codeChallengeMethod,
    prompt,
    maxAge,
    loginHint: v.login_hint || null,
    hintSubject,
    // An essential acr claim binds; acr_values only states a preference (Core 3.1.2.1), so the
    // claim's classes come first.
    acrValues: [...(claims?.acr ?? []), ...(v.acr_values?.split(" ").filter(Boolean) ?? [])].slice(0, 16),
    claims,
  };
}

/**
 * The subject of an id_token_hint: one of our own ID tokens (id-token-hint.ts: our keys, our
 * issuer, not an access token), issued to this client. Expiry is not checked: OIDC Core 3.1.2.1
 * allows an expired hint.
 */
async function idTokenHintSubject(
  hint: string,
  client: Client,
  ctx: TokenEnv,
): Promise<string> {
  const h = await verifyIdTokenHint(ctx, hint);
  if (!h || !h.aud.includes(client.id)) throw new InvalidRequest("The id_token_hint is not a valid ID token of this issuer.");
  return h.sub;
}
