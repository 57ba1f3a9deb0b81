import { dateOf, secondsOf } from "@/lib/clock";
import { hasNul } from "@/lib/http/text-input";
import { decodeProtectedHeader, importJWK, jwtVerify, type CryptoKey, type JWK } from "jose";
import { usableVerificationJwk } from "@/lib/keys/rsa-public-key";
import type { Caches } from "@/lib/store/caches";
import type { Client } from "@/lib/store/clients";
import type { MachineKey } from "@/lib/store/users";
import { assertionTimeProblem, claimTypeProblem, CLOCK_SKEW_SECONDS, jtiMemoryUntil } from "../assertion-lifetime";
import { ASSERTION_ALGS, describeJoseError } from "../client-auth";
import { endpointUrl } from "../endpoints";
import { InvalidGrant, InvalidRequest } from "@/lib/protocol/errors";
import { parseParams } from "../params/parse";
import { GRANT, jwtBearerParams } from "../params/token";
import { resolveTarget, resourcesOf } from "../resources";
import { parseScopeTokens } from "../scopes";
import { issueUserTokens } from "./issue";
import { grantTransaction } from "./transaction";
import type { Grant, GrantRequest } from "./types";

/**
 * RFC 7523 2.1: a machine user signs an assertion with one of its registered keys (`kid` names
 * the key); `iss` = `sub` = its user id. No client authentication is required: when none is sent,
 * the machine user acts as its own client (`client_id` and audience are its id). RFC 7523 3:
 * `exp` is required and the assertion valid at most an hour (assertion-lifetime.ts); `jti` is
 * optional, and when present the same one is never accepted twice while the assertion is valid.
 */
export const jwtBearerGrant: Grant = {
  type: GRANT.jwtBearer,
  clientAuth: "optional",
  async handle(g) {
    const p = parseParams(jwtBearerParams, g.form);
    const { key, userId, payload } = await verifyAssertion(g, p.assertion);
    const client = g.client ?? selfClient(g, userId);
    // RFC 8707 as for client credentials: an API the client may use, with the client's registered
    // scopes there as the permission model (all of them when none is asked for).
    const { target, protocolScopes } = resolveTarget(await g.store.apis.list(), client, resourcesOf(g.form), parseScopeTokens(p.scope), { allByDefault: true });
    const scopes = [...protocolScopes.filter((s) => s !== "offline_access"), ...(target?.scopes ?? [])];
    // The jti and the audit event: one transaction, so that a failure does not burn the jti.
    return grantTransaction(g, async (env) => {
      const user = await env.repos.users.get(userId);
      if (!user || user.type !== "machine" || user.locked) throw new InvalidGrant("The assertion's user is unknown or not an active machine user.");
      if (payload.jti !== undefined && !(await env.repos.replay.consumeOnce(`user:${user.id}`, payload.jti, jtiMemoryUntil(payload.exp)))) {
        throw new InvalidGrant("The assertion was already used (jti).");
      }
      const api = target ? { api: target, roles: await env.repos.roles.for({ userId: user.id }, target.api.id) } : null;
      // offline_access was dropped above: an access token, and an ID token for openid.
      const body = await issueUserTokens(env, { client, user, scopes, grantId: null, sessionId: null, authTime: dateOf(env.repos.clock), amr: ["pk"], target: api });
      await env.repos.audit.record({ ...g.audit, type: "user", id: user.id }, {
        action: "token.issued",
        targetType: "user",
        targetId: user.id,
        clientId: client.id,
        details: { grantType: GRANT.jwtBearer, keyId: key.id, scopes, ...(target ? { resource: target.api.identifier } : {}) },
      });
      return body;
    });
  },
};

/** The registration a machine user gets when it presents its assertion without a client: JWTs, instance lifetimes. */
function selfClient(g: GrantRequest, userId: string): Client {
  const l = g.settings.lifetimes;
  const now = dateOf(g.store.clock);
  return {
    id: userId,
    name: userId,
    redirectUris: [],
    postLogoutRedirectUris: [],
    responseTypes: [],
    grantTypes: [GRANT.jwtBearer],
    authMethod: "none",
    jwks: null,
    accessTokenType: "jwt",
    idTokenUserinfoAssertion: false,
    accessTokenLifetime: l.accessToken,
    idTokenLifetime: l.idToken,
    refreshTokenLifetime: l.refreshToken,
    secretHash: null,
    // A machine user has no web origin: its tokens are not for browser pages.
    allowedOrigins: [],
    firstParty: true,
    apiScopes: {},
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * A machine key's public key, parsed once (a key id's material never changes; deletion is checked
 * per request). A degenerate RSA key (stored before registration refused it) is not used.
 */
function parsedKey(caches: Caches, k: MachineKey): Promise<CryptoKey | Uint8Array> {
  return caches.parsedKeys.get(`machine:${k.id}`, () => {
    if (!usableVerificationJwk(k.publicJwk)) return Promise.reject(new Error("degenerate RSA key"));
    return importJWK(k.publicJwk as JWK, k.alg);
  });
}

async function verifyAssertion(g: GrantRequest, assertion: string) {
  // The header is not verified yet: its members are whatever JSON the sender wrote, not
  // necessarily the strings jose's type names them.
  let kid: unknown;
  let alg: unknown;
  try {
    ({ kid, alg } = decodeProtectedHeader(assertion));
  } catch {
    throw new InvalidGrant("The assertion is not a JWT.");
  }
  if (typeof alg !== "string" || !ASSERTION_ALGS.includes(alg)) throw new InvalidGrant("The assertion's algorithm is not accepted.");
  if (typeof kid !== "string" || !kid) throw new InvalidGrant("The assertion has no kid naming the machine key.");
  if (hasNul(kid)) throw new InvalidRequest("The assertion's kid contains a NUL character.");
  const key = await g.store.users.getMachineKey(kid);
  if (!key) throw new InvalidGrant("The assertion's key is unknown.");
  if (key.expiresAt && key.expiresAt <= dateOf(g.store.clock)) throw new InvalidGrant("The assertion's key has expired.");
  if (alg !== key.alg) throw new InvalidGrant("The assertion's algorithm does not match its key.");
  let payload;
  try {
    let verifyKey: CryptoKey | Uint8Array;
    try {
      verifyKey = await parsedKey(g.caches, key);
    } catch {
      throw new InvalidGrant("The assertion's key cannot be used.");
    }
    ({ payload } = await jwtVerify(assertion, verifyKey, {
      algorithms: [key.alg],
      issuer: key.userId,
      subject: key.userId,
      audience: [g.issuer, endpointUrl(g.issuer, "token")],
      requiredClaims: ["exp"],
      clockTolerance: CLOCK_SKEW_SECONDS,
      currentDate: dateOf(g.store.clock),
    }));
  } catch (err) {
    if (err instanceof InvalidGrant) throw err;
    throw new InvalidGrant(`The assertion is invalid: ${describeJoseError(err)}.`);
  }
  const malformed = claimTypeProblem(payload);
  if (malformed) throw new InvalidGrant(`The assertion is invalid: ${malformed}.`);
  const problem = assertionTimeProblem(payload, secondsOf(g.store.clock));
  if (problem) throw new InvalidGrant(`The assertion ${problem}.`);
  if (payload.jti !== undefined && (typeof payload.jti !== "string" || !payload.jti)) throw new InvalidGrant("The assertion's jti is empty.");
  return { key, userId: key.userId, payload: { exp: payload.exp!, jti: payload.jti } };
}
