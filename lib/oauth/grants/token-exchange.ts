import { dateOf, secondsOf } from "@/lib/clock";
import { CLIENT_AUTH_METHODS, TOKEN_TYPE } from "@/lib/protocol/vocabulary";
import { jwtVerify } from "jose";
import type { Client } from "@/lib/store/clients";
import type { User } from "@/lib/store/users";
import { resolveAccessToken } from "../access-token";
import { ASSERTION_ALGS, CLOCK_SKEW_SECONDS, clientKeySet, describeJoseError } from "../client-auth";
import { endpointUrl } from "../endpoints";
import { InvalidRequest, InvalidTarget } from "@/lib/protocol/errors";
import { parseParams } from "../params/parse";
import { GRANT, tokenExchangeParams } from "../params/token";
import { narrowScopes, parseScope, parseScopeTokens, scopeString } from "../scopes";
import { accessTokenScopes, resolveTarget } from "../resources";
import { issueAccessToken, issueIdToken, issueRefreshToken, lifetimeWithin, verifyOwnJwt, wantsRefreshToken } from "../tokens";
import { grantTransaction } from "./transaction";
import type { Grant, GrantRequest, TokenResponse } from "./types";
import { claimTypeProblem } from "../assertion-lifetime";

/** RFC 8693 3 token type identifiers, and Torii's own for a bare user id (spec 2.2). */
export { TOKEN_TYPE };

/** Spec 2.2, row by row: which identifiers may appear in which role. */
const SUBJECT_TYPES: readonly string[] = [TOKEN_TYPE.accessToken, TOKEN_TYPE.idToken, TOKEN_TYPE.jwt, TOKEN_TYPE.userId];
const ACTOR_TYPES: readonly string[] = [TOKEN_TYPE.accessToken, TOKEN_TYPE.idToken];
const REQUESTED_TYPES: readonly string[] = [TOKEN_TYPE.accessToken, TOKEN_TYPE.idToken, TOKEN_TYPE.jwt];
/** Longest a client-signed `jwt` subject token may be valid ahead: short-lived, like the client assertions it resembles. */
const MAX_SUBJECT_JWT_SECONDS = 600;
/** Subject types that name a subject without any proof of the subject's consent: only with an actor. */
const NEEDS_ACTOR: readonly string[] = [TOKEN_TYPE.jwt, TOKEN_TYPE.userId];

/** A validated subject or actor token: who it names and what it was good for. */
type Party = {
  sub: string;
  user: User | null;
  audience: string[];
  /** Scopes the token carries; null for token types without scopes. */
  scopes: string[] | null;
  /** An `act` claim the token already had (delegation chains nest). */
  act: Record<string, unknown> | null;
  sessionId: string | null;
  /** When the token expires (seconds since the epoch); null for a bare user id, which never does. */
  exp: number | null;
  /** A client-signed jwt's `jti`, recorded as used inside the grant's transaction. */
  jtiOnce?: { issuer: string; jti: string; until: Date; param: string };
};

const asList = (aud: unknown): string[] => (Array.isArray(aud) ? aud.map(String) : typeof aud === "string" ? [aud] : []);

/**
 * RFC 8693, enabled by the `tokenExchange` feature. Changes scope (narrower), audience (a subset
 * of the subject's and actor's) or subject. An actor acting as someone else is impersonation: it
 * needs the `impersonation` feature and an actor holding the `impersonation` role, and every
 * issued token names the actor in `act`.
 */
export const tokenExchangeGrant: Grant = {
  type: GRANT.tokenExchange,
  clientAuth: CLIENT_AUTH_METHODS,
  feature: "tokenExchange",
  async handle(g) {
    const p = parseParams(tokenExchangeParams, g.form);
    const client = g.client!;
    if (!SUBJECT_TYPES.includes(p.subject_token_type)) throw new InvalidRequest(`subject_token_type ${p.subject_token_type} is not supported.`);
    if (p.actor_token !== undefined && p.actor_token_type === undefined) throw new InvalidRequest("The actor_token_type parameter is missing.");
    if (p.actor_token === undefined && p.actor_token_type !== undefined) throw new InvalidRequest("actor_token_type was sent without actor_token.");
    if (p.actor_token_type !== undefined && !ACTOR_TYPES.includes(p.actor_token_type)) {
      throw new InvalidRequest(`actor_token_type ${p.actor_token_type} is not supported.`);
    }
    if (NEEDS_ACTOR.includes(p.subject_token_type) && p.actor_token === undefined) {
      throw new InvalidRequest(`A subject_token of type ${p.subject_token_type} needs an actor_token.`);
    }
    // RFC 8693 2.1 / spec 4.3.5: without requested_token_type the answer is an access token, and
    // spec 2.2 issues the access_token type as an opaque token, whatever the client's own format;
    // a JWT is what requested_token_type jwt asks for.
    const requested = p.requested_token_type ?? TOKEN_TYPE.accessToken;
    if (!REQUESTED_TYPES.includes(requested)) throw new InvalidRequest(`requested_token_type ${requested} is not supported.`);

    const subject = await resolve(g, client, p.subject_token, p.subject_token_type, "subject_token");
    const actor = p.actor_token ? await resolve(g, client, p.actor_token, p.actor_token_type!, "actor_token") : null;

    const impersonation = actor !== null && actor.sub !== subject.sub;
    if (impersonation) {
      if (!g.settings.features.impersonation) throw new InvalidRequest("Impersonation is not enabled on this instance.");
      if (!actor.user?.roles.includes("impersonation")) throw new InvalidRequest("The actor is not allowed to impersonate.");
    }
    const act = actor ? { sub: actor.sub, ...(subject.act ? { act: subject.act } : {}) } : subject.act;

    // RFC 8707 / RFC 8693 2.1 `resource`: an API the client may use (invalid_target otherwise).
    // The new token is for it: its identifier in `aud`, its lifetime, the API scopes asked for
    // that the client may have there, and the subject's roles at it. Without a resource, the
    // scopes are protocol scopes as before.
    const resources = p.resource?.split(" ") ?? [];
    const resolved = resources.length ? resolveTarget(await g.store.apis.list(), client, resources, parseScopeTokens(p.scope), { allByDefault: false }) : null;
    const target = resolved?.target ?? null;
    const requestedScopes = resolved ? resolved.protocolScopes : parseScope(p.scope);
    const protocolScopes = subject.scopes ? narrowScopes(requestedScopes, subject.scopes) : requestedScopes;
    const scopes = accessTokenScopes(protocolScopes, target);

    const allowedAudience = [...new Set([...subject.audience, ...(actor?.audience ?? [])])];
    let audience: string[];
    if (p.audience !== undefined) {
      audience = [...new Set(p.audience.split(" "))];
      const outside = audience.filter((a) => !allowedAudience.includes(a));
      if (outside.length) throw new InvalidTarget(`audience must be within the subject's and actor's audiences: ${outside.join(" ")} is not.`);
    } else if (target) {
      audience = [];
    } else {
      // Without audience or resource the new token keeps the subject token's audience (RFC 8693
      // 2.1 leaves it to the server), though issued to this client: acceptable only because
      // nothing issued from it outlives the subject token (`notAfter` in the transaction below).
      audience = subject.audience.length ? subject.audience : actor?.audience.length ? actor.audience : [client.id];
    }
    if (target) audience = [target.api.identifier, ...audience.filter((a) => a !== target.api.identifier)];
    // The subject's roles at the token's API: the one `resource` named, or else an API the audience
    // names (kept from the subject token), as introspection by that API reports them.
    const rolesApi = target?.api ?? (await g.store.apis.list()).find((a) => audience.includes(a.identifier));
    const roles = rolesApi ? await g.store.roles.for(subject.user ? { userId: subject.user.id } : { clientId: subject.sub }, rolesApi.id) : null;

    if (requested === TOKEN_TYPE.idToken && !subject.user) throw new InvalidRequest("An ID token can only be issued for a user subject.");
    // The subject jwt's jti, the grant, its tokens and the audit event: one transaction.
    return grantTransaction(g, async (env) => {
      const tx = env.repos;
      // A token issued by exchange never outlives the subject token nor the actor token (a bare
      // user id has no expiry, and always comes with an actor token): otherwise exchanging a
      // short-lived token, and then the result again, or for a refresh token, would keep the
      // access alive indefinitely. `expires_in` says the capped lifetime.
      const now = secondsOf(tx.clock);
      for (const [party, param] of [[subject, "subject_token"], [actor, "actor_token"]] as const) {
        if (party?.exp != null && party.exp <= now) throw new InvalidRequest(`The ${param} is invalid, expired or revoked.`);
      }
      const earliest = Math.min(subject.exp ?? Infinity, actor?.exp ?? Infinity);
      const notAfter = Number.isFinite(earliest) ? earliest : null;
      for (const once of [subject.jtiOnce, actor?.jtiOnce]) {
        if (once && !(await tx.replay.consumeOnce(once.issuer, once.jti, once.until))) throw new InvalidRequest(`The ${once.param} was already used (jti).`);
      }
      const grantId = (
        await tx.grants.create({
          clientId: client.id,
          userId: subject.user?.id ?? null,
          sessionId: subject.sessionId,
          grantType: GRANT.tokenExchange,
          scopes,
          // A refresh token of this grant is for the same API (resources.ts tokenTarget).
          ...(target ? { resources: [target.api.identifier] } : {}),
          expiresAt: new Date(tx.clock.now() + Math.max(client.accessTokenLifetime, client.refreshTokenLifetime) * 1000),
        })
      ).id;
      const ctx = {
        ...env,
        client,
        user: subject.user,
        scopes,
        audience,
        grantId,
        sessionId: subject.sessionId,
        actor: act,
        // Every token below, and a refresh token's family with all it gives later, ends by then.
        notAfter,
        now,
      };

      let body: TokenResponse;
      if (requested === TOKEN_TYPE.idToken) {
        body = {
          access_token: await issueIdToken({ ...ctx, withAccessToken: false }),
          issued_token_type: TOKEN_TYPE.idToken,
          token_type: "N_A",
          expires_in: lifetimeWithin(ctx, client.idTokenLifetime),
          scope: scopeString(scopes),
        };
      } else {
        const forApi = target ? { lifetime: target.api.accessTokenLifetime, roles: roles ?? [] } : roles ? { roles } : {};
        const at = await issueAccessToken({ ...ctx, ...forApi, format: requested === TOKEN_TYPE.jwt ? "jwt" : "opaque" });
        body = {
          access_token: at.token,
          issued_token_type: requested,
          token_type: "Bearer",
          expires_in: at.expiresIn,
          scope: scopeString(scopes),
        };
        if (scopes.includes("openid") && subject.user) {
          body.id_token = await issueIdToken({ ...ctx, accessToken: at.token, withAccessToken: true });
        }
        // Only for offline_access the subject token carries (narrowScopes), i.e. offline access
        // its user granted. Its family keeps the `act`, the audience and `notAfter` on every
        // refresh (refresh-token.ts), so neither it nor its successors outlive the subject and
        // actor tokens: exchanging a short-lived token for a refresh token must not turn it into
        // lasting access (RFC 8693 §2.2.1 expects none for a temporary credential).
        if (wantsRefreshToken(client, scopes)) body.refresh_token = (await issueRefreshToken(ctx)).token;
      }
      await tx.audit.record(g.audit, {
        action: impersonation ? "token.impersonated" : "token.exchanged",
        targetType: subject.user ? "user" : "client",
        targetId: subject.sub,
        clientId: client.id,
        details: { grantId, actor: actor?.sub ?? null, subjectTokenType: p.subject_token_type, issuedTokenType: requested, scopes, audience, ...(target ? { resource: target.api.identifier } : {}) },
      });
      return body;
    });
  },
};

async function resolve(g: GrantRequest, client: Client, token: string, type: string, param: string): Promise<Party> {
  const invalid = () => new InvalidRequest(`The ${param} is invalid, expired or revoked.`);
  const userOrNull = async (id: string) => {
    const u = await g.store.users.get(id);
    if (u?.locked) throw invalid();
    return u ?? null;
  };
  switch (type) {
    case TOKEN_TYPE.accessToken: {
      // The same question introspection and userinfo ask, answered the same way.
      const a = await resolveAccessToken(g, token, g.store.clock.now());
      if (!a) throw invalid();
      return { sub: a.sub, user: a.user, audience: a.audience, scopes: a.scopes, act: a.actor, sessionId: a.sessionId, exp: a.exp };
    }
    case TOKEN_TYPE.idToken: {
      const c = await verifyOwnJwt(g, token, "JWT");
      if (!c || typeof c.azp !== "string") throw invalid();
      const user = await userOrNull(c.sub!);
      if (!user) throw invalid();
      return {
        sub: user.id,
        user,
        audience: asList(c.aud),
        scopes: null,
        act: (c.act as Record<string, unknown> | undefined) ?? null,
        sessionId: typeof c.sid === "string" ? c.sid : null,
        exp: c.exp!,
      };
    }
    case TOKEN_TYPE.jwt: {
      // Signed by the requesting client with one of its registered keys; names the user to act for.
      const keys = clientKeySet(g.caches, client);
      if (!keys) throw new InvalidRequest("A subject_token of type jwt needs a client with registered keys.");
      let payload;
      try {
        ({ payload } = await jwtVerify(token, keys, {
          algorithms: ASSERTION_ALGS,
          issuer: client.id,
          requiredClaims: ["exp", "sub", "jti"],
          clockTolerance: CLOCK_SKEW_SECONDS,
          currentDate: dateOf(g.store.clock),
        }));
      } catch (err) {
        throw new InvalidRequest(`The ${param} is invalid: ${describeJoseError(err)}.`);
      }
      const problem = claimTypeProblem(payload);
      if (problem) throw new InvalidRequest(`The ${param} is invalid: ${problem}.`);
      // Like a client assertion: short-lived and used once, so that a leaked one cannot be replayed.
      if (payload.exp! > secondsOf(g.store.clock) + MAX_SUBJECT_JWT_SECONDS + CLOCK_SKEW_SECONDS) {
        throw new InvalidRequest(`The ${param} expires too far ahead (at most ${MAX_SUBJECT_JWT_SECONDS} s).`);
      }
      const aud = asList(payload.aud);
      if (aud.length && !aud.includes(g.issuer) && !aud.includes(endpointUrl(g.issuer, "token"))) {
        throw new InvalidRequest(`The ${param} is not meant for this issuer.`);
      }
      if (typeof payload.jti !== "string" || !payload.jti) throw new InvalidRequest(`The ${param} has no jti.`);
      const user = await userOrNull(payload.sub!);
      if (!user) throw invalid();
      const jtiOnce = { issuer: `client:${client.id}`, jti: payload.jti, until: new Date((payload.exp! + CLOCK_SKEW_SECONDS) * 1000), param };
      return { sub: user.id, user, audience: [], scopes: null, act: null, sessionId: null, exp: payload.exp!, jtiOnce };
    }
    case TOKEN_TYPE.userId: {
      const user = await userOrNull(token);
      if (!user) throw new InvalidRequest(`The ${param} names no known user.`);
      return { sub: user.id, user, audience: [], scopes: null, act: null, sessionId: null, exp: null };
    }
    default:
      throw new InvalidRequest(`${param}_type ${type} is not supported.`);
  }
}
