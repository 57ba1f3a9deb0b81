import { dateOf, secondsOf } from "@/lib/clock";
import { hasNul } from "@/lib/http/text-input";
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from "jose";
import { usableVerificationJwk } from "@/lib/keys/rsa-public-key";
import type { Caches } from "@/lib/store/caches";
import { matchesSha256 } from "@/lib/crypto";
import { CLIENT_AUTH_METHODS, type ClientAuthMethod } from "@/lib/protocol/vocabulary";
import type { Client } from "@/lib/store/clients";
import type { Store } from "@/lib/store/repositories";
import { assertionTimeProblem, claimTypeProblem, CLOCK_SKEW_SECONDS, jtiMemoryUntil } from "./assertion-lifetime";
import { endpointUrl } from "./endpoints";
import { InvalidClient, InvalidRequest } from "@/lib/protocol/errors";
import type { Form } from "./form";
import type { HttpRequest } from "@/lib/http/request";

export type { ClientAuthMethod };
export const ALL_METHODS: readonly ClientAuthMethod[] = CLIENT_AUTH_METHODS;

export const CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/** Asymmetric algorithms only: `none` and HS* (a shared secret as key) are never accepted for assertions. */
export const ASSERTION_ALGS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];
export { CLOCK_SKEW_SECONDS } from "./assertion-lifetime";

export type AuthenticatedClient = { client: Client; method: ClientAuthMethod };

type Presented = {
  /** `raw`: the decoded `id:secret` before form-decoding (an API's URI identifier sent as is). */
  basic?: { id: string; secret: string; raw: string };
  bodyId?: string;
  bodySecret?: string;
  assertion?: string;
  assertionType?: string;
};

const BASIC_CHALLENGE = { "WWW-Authenticate": 'Basic realm="torii"' };

/** An Authorization header of the Basic scheme; "Basic" with nothing after it is one too (malformed). */
const isBasic = (auth: string | null): auth is string => auth !== null && /^basic(\s|$)/i.test(auth);

/** RFC 6749 2.3.1 / Appendix B: each part form-urlencoded, then `id:secret` Base64-encoded. */
function formDecode(v: string): string {
  return decodeURIComponent(v.replace(/\+/g, " "));
}

function parseBasic(header: string): { id: string; secret: string; raw: string } {
  const fail = () => new InvalidClient("The Basic authorization header is malformed.", BASIC_CHALLENGE);
  const b64 = header.slice(6).trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw fail();
  const decoded = Buffer.from(b64, "base64").toString("utf8");
  const i = decoded.indexOf(":");
  if (i < 0) throw fail();
  let parsed: { id: string; secret: string; raw: string };
  try {
    parsed = { id: formDecode(decoded.slice(0, i)), secret: formDecode(decoded.slice(i + 1)), raw: decoded };
  } catch {
    throw fail();
  }
  if (hasNul(parsed.id) || hasNul(parsed.secret)) throw new InvalidRequest("The Basic credentials contain a NUL character.");
  return parsed;
}

function presented(request: HttpRequest, form: Form): Presented {
  const p: Presented = {
    bodyId: form.get("client_id"),
    bodySecret: form.get("client_secret"),
    assertion: form.get("client_assertion"),
    assertionType: form.get("client_assertion_type"),
  };
  const auth = request.headers.get("authorization");
  if (isBasic(auth)) p.basic = parseBasic(auth);
  return p;
}

/**
 * The client id a request claims, before any authentication (for rate limits and the audit of
 * failed authentications); undefined when it names none or its credentials cannot be parsed.
 */
export function claimedClientId(request: HttpRequest, form: Form): string | undefined {
  try {
    const p = presented(request, form);
    return p.basic?.id ?? p.bodyId ?? (p.assertion ? assertionSubject(p.assertion) : undefined);
  } catch {
    return undefined;
  }
}

/** Whether the request carries any client identification or credential (for grants where it is optional). */
export function hasClientCredentials(request: HttpRequest, form: Form): boolean {
  const auth = request.headers.get("authorization");
  return isBasic(auth) || form.has("client_id") || form.has("client_assertion") || form.has("client_secret");
}

export type ClientAuthEnv = { store: Store; issuer: string; caches: Caches };

/** A client secret is stored as its SHA-256 (it is 256 random bits), compared in constant time. */
export function verifyClientSecret(client: Client, presented: string): boolean {
  if (!client.secretHash) return false;
  return matchesSha256(presented, client.secretHash);
}

/**
 * Authenticates the client of a back-channel request (spec 5). Exactly one mechanism; it must be
 * the client's registered method and one of `allowed`. Failures are `invalid_client` (401,
 * with a Basic challenge when Basic was tried); two mechanisms at once, or a body `client_id`
 * naming another client than the credentials, are `invalid_request` (spec 7: several credentials).
 */
export async function authenticateClient(
  request: HttpRequest,
  form: Form,
  env: ClientAuthEnv,
  allowed: readonly ClientAuthMethod[] = ALL_METHODS,
): Promise<AuthenticatedClient> {
  const p = presented(request, form);
  // RFC 6749 5.2: a client that tried the Authorization header (with any scheme) is told, with
  // the 401, the scheme it can use there.
  const challenge = request.headers.get("authorization") !== null ? BASIC_CHALLENGE : {};
  const fail = (why: string) => new InvalidClient(why, challenge);

  const mechanisms = [p.basic, p.bodySecret, p.assertion ?? p.assertionType].filter((m) => m !== undefined).length;
  if (mechanisms > 1) throw new InvalidRequest("More than one client authentication mechanism was used.");

  let method: ClientAuthMethod;
  let clientId: string | undefined;
  if (p.basic) {
    method = "client_secret_basic";
    clientId = p.basic.id;
    if (p.bodyId !== undefined && p.bodyId !== clientId) throw new InvalidRequest("client_id does not match the authenticated client.");
  } else if (p.bodySecret !== undefined) {
    method = "client_secret_post";
    clientId = p.bodyId;
    if (!clientId) throw fail("client_id is missing.");
  } else if (p.assertion !== undefined || p.assertionType !== undefined) {
    method = "private_key_jwt";
    if (p.assertionType !== CLIENT_ASSERTION_TYPE) throw fail(`client_assertion_type must be ${CLIENT_ASSERTION_TYPE}.`);
    if (!p.assertion) throw fail("client_assertion is missing.");
    clientId = assertionSubject(p.assertion);
    if (p.bodyId !== undefined && p.bodyId !== clientId) throw new InvalidRequest("client_id does not match the client assertion.");
  } else if (p.bodyId !== undefined) {
    method = "none";
    clientId = p.bodyId;
  } else {
    throw fail("Client authentication is missing.");
  }

  const client = clientId ? await env.store.clients.get(clientId) : undefined;
  if (!client) throw fail("The client is unknown or the credentials are invalid.");
  if (client.authMethod !== method) throw fail(`The client must authenticate with ${client.authMethod}.`);
  if (!allowed.includes(method)) throw fail(`${method} is not accepted for this request.`);

  if (method === "client_secret_basic" || method === "client_secret_post") {
    const secret = method === "client_secret_basic" ? p.basic!.secret : p.bodySecret!;
    if (!verifyClientSecret(client, secret)) throw fail("The client is unknown or the credentials are invalid.");
  } else if (method === "private_key_jwt") {
    await verifyClientAssertion(client, p.assertion!, env, new URL(request.url).pathname);
  }
  return { client, method };
}

/** The `sub` of an unverified assertion, only to find the client whose keys will verify it. */
function assertionSubject(assertion: string): string {
  const parts = assertion.split(".");
  if (parts.length !== 3) throw new InvalidClient("client_assertion is not a JWT.");
  let sub: string | undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as { sub?: unknown; iss?: unknown };
    sub = typeof payload.sub === "string" ? payload.sub : typeof payload.iss === "string" ? payload.iss : undefined;
  } catch {
    sub = undefined;
  }
  if (!sub) throw new InvalidClient("client_assertion is not a JWT with a subject.");
  if (hasNul(sub)) throw new InvalidRequest("The client_assertion subject contains a NUL character.");
  return sub;
}

/** Whoever signs assertions with registered keys: a client, or an API calling introspection. */
type KeyHolder = { jwks: { keys: Record<string, unknown>[] } | null; updatedAt: Date };

/** A client's registered keys as a jose key set, parsed once per registration version (engine cache). */
export function clientKeySet(caches: Caches, client: Client): JWTVerifyGetKey | undefined {
  return keySetOf(caches, client, client.id);
}

function keySetOf(caches: Caches, holder: KeyHolder, cacheKey: string): JWTVerifyGetKey | undefined {
  if (!holder.jwks?.keys.length) return undefined;
  const map = caches.clientKeySets;
  const version = holder.updatedAt.getTime();
  const hit = map.get(cacheKey);
  if (hit && hit.version === version) return hit.keys;
  // A degenerate RSA key (stored before registration refused it) is left out, as if not registered.
  const usable = holder.jwks.keys.filter(usableVerificationJwk);
  if (!usable.length) return undefined;
  let keys: JWTVerifyGetKey;
  try {
    keys = createLocalJWKSet({ keys: usable });
  } catch {
    return undefined;
  }
  if (map.size > 10_000) map.clear();
  map.set(cacheKey, { version, keys });
  return keys;
}

/**
 * RFC 7523 2.2 / 3 and OIDC Core 9: `iss` = `sub` = client id, `aud` this issuer or endpoint,
 * `exp` within an hour (assertion-lifetime.ts), signed by a registered key with an asymmetric
 * algorithm, and a `jti` used once: RFC 7523 3 makes `jti` optional and leaves replay protection
 * to the server; for client authentication Torii requires it, since an assertion replayed within
 * its lifetime would authenticate anyone who saw it as the client.
 */
function verifyClientAssertion(client: Client, assertion: string, env: ClientAuthEnv, pathname: string): Promise<void> {
  return verifyAssertion(keySetOf(env.caches, client, client.id), client.id, assertion, env, pathname);
}

async function verifyAssertion(keys: JWTVerifyGetKey | undefined, id: string, assertion: string, env: ClientAuthEnv, pathname: string): Promise<void> {
  if (!keys) throw new InvalidClient("The client has no registered keys.");
  let payload;
  try {
    ({ payload } = await jwtVerify(assertion, keys, {
      algorithms: ASSERTION_ALGS,
      issuer: id,
      subject: id,
      audience: [env.issuer, endpointUrl(env.issuer, "token"), env.issuer + pathname],
      requiredClaims: ["exp", "jti"],
      clockTolerance: CLOCK_SKEW_SECONDS,
      currentDate: dateOf(env.store.clock),
    }));
  } catch (err) {
    throw new InvalidClient(`The client assertion is invalid: ${describeJoseError(err)}.`);
  }
  const malformed = claimTypeProblem(payload);
  if (malformed) throw new InvalidClient(`The client assertion is invalid: ${malformed}.`);
  const problem = assertionTimeProblem(payload, secondsOf(env.store.clock));
  if (problem) throw new InvalidClient(`The client assertion ${problem}.`);
  if (typeof payload.jti !== "string" || !payload.jti) throw new InvalidClient("The client assertion has no jti.");
  const fresh = await env.store.replay.consumeOnce(`client:${id}`, payload.jti, jtiMemoryUntil(payload.exp!));
  if (!fresh) throw new InvalidClient("The client assertion was already used.");
}

/** A short reason for a failed JWT check that never echoes key material or internals. */
export function describeJoseError(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return "expired";
  if (err instanceof joseErrors.JWTClaimValidationFailed) return `claim ${err.claim} ${err.reason === "check_failed" ? "does not match" : err.reason}`;
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return "algorithm not allowed";
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return "signature verification failed";
  if (err instanceof joseErrors.JWKSNoMatchingKey) return "no matching registered key";
  if (err instanceof joseErrors.JWKSMultipleMatchingKeys) return "several registered keys match; set kid";
  if (err instanceof joseErrors.JWTInvalid || err instanceof joseErrors.JWSInvalid) return "malformed";
  return "not verifiable";
}

/**
 * An API calling introspection with its own credentials (RFC 7662 2.1 leaves the method to the
 * server): HTTP Basic with its identifier and secret, or `private_key_jwt` with `iss` = `sub` =
 * its identifier, signed by one of its registered keys. Undefined when the credentials do not
 * name an API (then they are a client's); `invalid_client` when they name one and fail.
 */
export async function authenticateApi<A extends KeyHolder & { identifier: string; secretHash: string | null }>(
  request: HttpRequest,
  form: Form,
  env: ClientAuthEnv,
  apis: readonly A[],
): Promise<A | undefined> {
  const p = presented(request, form);
  if (p.basic) {
    const basic = p.basic;
    // RFC 6749 2.3.1: the identifier is form-urlencoded, so `https%3A%2F%2F...`. Many libraries
    // send a URI as is; its first colon would then split it, so an API whose identifier begins
    // the raw `id:secret`, followed by a colon, is accepted too (a URI has no other reading).
    const encoded = apis.find((a) => a.identifier === basic.id);
    const api = encoded ?? apis.find((a) => basic.raw.startsWith(`${a.identifier}:`));
    if (!api) return undefined;
    const secret = encoded ? basic.secret : basic.raw.slice(api.identifier.length + 1);
    if (p.bodySecret !== undefined || p.assertion !== undefined) throw new InvalidRequest("More than one client authentication mechanism was used.");
    if (!api.secretHash || !matchesSha256(secret, api.secretHash)) throw new InvalidClient("Client authentication failed.", BASIC_CHALLENGE);
    return api;
  }
  if (p.assertion === undefined) return undefined;
  const api = apis.find((a) => a.identifier === assertionSubject(p.assertion!));
  if (!api) return undefined;
  if (p.assertionType !== CLIENT_ASSERTION_TYPE) throw new InvalidClient(`client_assertion_type must be ${CLIENT_ASSERTION_TYPE}.`);
  await verifyAssertion(keySetOf(env.caches, api, `api:${api.identifier}`), api.identifier, p.assertion, env, new URL(request.url).pathname);
  return api;
}
