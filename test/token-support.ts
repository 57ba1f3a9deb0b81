import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from "jose";
import { sessions, userAgents } from "@/db/schema";
import { randomToken } from "@/lib/crypto";
import { resultRows } from "@/lib/db/client";
import { insertClient, type Client, type NewClient } from "@/lib/store/clients";
import { createAuthorizationCode } from "@/lib/store/codes";
import { createGrant } from "@/lib/store/grants";
import { insertUser, type NewUser, type User } from "@/lib/store/users";
import type { TestInstance } from "./harness";

/** Fixtures for the token endpoint tests: clients, users, sessions and codes written through the stores. */

export const ALL_GRANTS = [
  "authorization_code",
  "refresh_token",
  "client_credentials",
  "urn:ietf:params:oauth:grant-type:jwt-bearer",
  "urn:ietf:params:oauth:grant-type:token-exchange",
];

export async function makeClient(t: TestInstance, o: Partial<NewClient> = {}): Promise<{ client: Client; secret: string | null }> {
  return insertClient(t.inst.db, {
    name: "test client",
    redirectUris: ["https://rp.example/cb"],
    responseTypes: ["code"],
    grantTypes: ALL_GRANTS,
    authMethod: "client_secret_basic",
    accessTokenLifetime: 900,
    idTokenLifetime: 600,
    refreshTokenLifetime: 86_400,
    ...o,
  });
}

export async function makeUser(t: TestInstance, o: Partial<NewUser> = {}): Promise<User> {
  return insertUser(t.inst.db, {
    type: "human",
    username: "u" + randomToken(6).toLowerCase().replace(/[^a-z0-9]/g, ""),
    email: "jane@example.com",
    emailVerified: true,
    givenName: "Jane",
    familyName: "Doe",
    phone: "+41 44 000 00 00",
    address: { streetAddress: "Main St 1", locality: "Zurich", postalCode: "8000", country: "CH" },
    ...o,
  });
}

export async function makeSession(t: TestInstance, userId: string): Promise<string> {
  const uaId = randomToken(12);
  await t.inst.db.insert(userAgents).values({ id: uaId, cookieHash: randomToken(16) });
  const id = randomToken(12);
  const now = Date.now();
  await t.inst.db.insert(sessions).values({
    id,
    userAgentId: uaId,
    userId,
    authTime: new Date(now - 5000),
    amr: ["pwd"],
    idleExpiresAt: new Date(now + 3_600_000),
    absoluteExpiresAt: new Date(now + 86_400_000),
  });
  return id;
}

export const VERIFIER = "v".repeat(20) + randomToken(24);
export const CHALLENGE = createHash("sha256").update(VERIFIER).digest("base64url");

export async function makeCode(
  t: TestInstance,
  o: {
    client: Client;
    user: User;
    scopes?: string[];
    redirectUri?: string;
    nonce?: string | null;
    challenge?: string | null;
    sessionId?: string | null;
    lifetimeSeconds?: number;
  },
): Promise<{ code: string; grantId: string }> {
  const scopes = o.scopes ?? ["openid", "profile", "email"];
  const { id: grantId } = await createGrant(t.inst.db, {
    clientId: o.client.id,
    userId: o.user.id,
    sessionId: o.sessionId ?? null,
    grantType: "authorization_code",
    scopes,
    expiresAt: new Date(Date.now() + 86_400_000),
  });
  const { code } = await createAuthorizationCode(t.inst.db, {
    grantId,
    clientId: o.client.id,
    userId: o.user.id,
    sessionId: o.sessionId ?? null,
    redirectUri: o.redirectUri ?? "https://rp.example/cb",
    scopes,
    nonce: o.nonce === undefined ? "n-0S6_WzA2Mj" : o.nonce,
    codeChallenge: o.challenge ?? null,
    codeChallengeMethod: o.challenge ? "S256" : null,
    authTime: new Date(Date.now() - 5000),
    amr: ["pwd"],
    lifetimeSeconds: o.lifetimeSeconds ?? 60,
  }, new Date());
  return { code, grantId };
}

/** RFC 6749 2.3.1: form-urlencode id and secret, then Base64 `id:secret`. */
export function basic(id: string, secret: string): string {
  const enc = (v: string) => encodeURIComponent(v).replace(/%20/g, "+");
  return "Basic " + Buffer.from(`${enc(id)}:${enc(secret)}`).toString("base64");
}

export async function token(
  t: TestInstance,
  params: Record<string, string>,
  o: { auth?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ res: Response; status: number; body: Record<string, any> }> {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", ...o.headers };
  if (o.auth) headers.authorization = o.auth;
  const res = await fetch(t.baseUrl + "/oauth/v2/token", {
    method: "POST",
    headers,
    body: o.body ?? new URLSearchParams(params).toString(),
  });
  const text = await res.text();
  let body: Record<string, any> = {};
  try {
    body = JSON.parse(text);
  } catch {
    body = { raw: text };
  }
  return { res, status: res.status, body };
}

const jwksCache = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

/** Verifies a JWT against the instance's published key set, as a relying party would. */
export async function verify(t: TestInstance, jwt: string): Promise<{ payload: JWTPayload & Record<string, any>; header: Record<string, any> }> {
  let jwks = jwksCache.get(t.baseUrl);
  if (!jwks) jwksCache.set(t.baseUrl, (jwks = createRemoteJWKSet(new URL(t.baseUrl + "/oauth/v2/keys"))));
  const { payload, protectedHeader } = await jwtVerify(jwt, jwks, { issuer: t.issuer, algorithms: ["RS256"] });
  return { payload: payload as JWTPayload & Record<string, any>, header: protectedHeader };
}

export function expectNoStore(res: Response): void {
  if (res.headers.get("cache-control") !== "no-store") throw new Error("Cache-Control is not no-store");
  if (res.headers.get("pragma") !== "no-cache") throw new Error("Pragma is not no-cache");
  if (!res.headers.get("content-type")?.startsWith("application/json")) throw new Error("not JSON");
}

/**
 * How many of a grant's rows are still live: the grant and its refresh families. Revoking a grant
 * marks those (every use of a refresh token checks them), so 0 means nothing it issued is usable.
 */
export async function liveGrantRows(t: TestInstance, grantId: string): Promise<number> {
  const [row] = resultRows<{ n: number }>(
    await t.inst.db.execute(
      sql`SELECT ((SELECT count(*) FROM grants WHERE id = ${grantId} AND revoked_at IS NULL) + (SELECT count(*) FROM refresh_token_families WHERE grant_id = ${grantId} AND revoked_at IS NULL))::int AS n`,
    ),
  );
  return row!.n;
}
