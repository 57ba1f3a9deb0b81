import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { randomToken } from "@/lib/crypto";
import type { Client, NewClient } from "@/lib/store/clients";
import type { User } from "@/lib/store/users";
import type { TestInstance } from "./harness";
import { basic, makeClient, makeCode, makeSession, makeUser, token } from "./token-support";

/** Fixtures shared by the introspection, revocation, userinfo and end-session tests. */

export type Issued = {
  client: Client;
  secret: string | null;
  auth: string;
  user: User;
  sessionId: string;
  grantId: string;
  access: string;
  refresh?: string;
  idToken: string;
};

/** Tokens issued through the real token endpoint from a code of a fresh session. */
export async function issueTokens(
  t: TestInstance,
  o: { client?: { client: Client; secret: string | null }; clientPatch?: Partial<NewClient>; user?: User; scopes?: string[]; sessionId?: string } = {},
): Promise<Issued> {
  const { client, secret } = o.client ?? (await makeClient(t, o.clientPatch));
  const user = o.user ?? (await makeUser(t));
  const sessionId = o.sessionId ?? (await makeSession(t, user.id));
  const { code, grantId } = await makeCode(t, { client, user, sessionId, scopes: o.scopes ?? ["openid", "profile", "email", "offline_access"] });
  const auth = basic(client.id, secret!);
  const r = await token(t, { grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb" }, { auth });
  if (r.status !== 200) throw new Error(`token request failed: ${JSON.stringify(r.body)}`);
  return { client, secret, auth, user, sessionId, grantId, access: r.body.access_token, refresh: r.body.refresh_token, idToken: r.body.id_token };
}

async function form(t: TestInstance, path: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(t.baseUrl + path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(params).toString(),
  });
  const text = await res.text();
  let body: Record<string, any> = {};
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    body = { raw: text };
  }
  return { res, status: res.status, body, text };
}

export function introspect(t: TestInstance, tokenValue: string, auth?: string, extra: Record<string, string> = {}) {
  return form(t, "/oauth/v2/introspect", { token: tokenValue, ...extra }, auth ? { authorization: auth } : {});
}

export function revoke(t: TestInstance, tokenValue: string, auth?: string, extra: Record<string, string> = {}) {
  return form(t, "/oauth/v2/revoke", { token: tokenValue, ...extra }, auth ? { authorization: auth } : {});
}

export function refresh(t: TestInstance, refreshToken: string, auth: string) {
  return token(t, { grant_type: "refresh_token", refresh_token: refreshToken }, { auth });
}

/** A private_key_jwt client with its key pair and a fresh-assertion maker (RFC 7523). */
export async function keyClient(t: TestInstance, patch: Partial<NewClient> = {}) {
  const keys = await generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await exportJWK(keys.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  const { client } = await makeClient(t, { authMethod: "private_key_jwt", jwks: { keys: [jwk] }, ...patch });
  const assertion = (aud = t.issuer, key: CryptoKey = keys.privateKey) => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(client.id)
      .setSubject(client.id)
      .setAudience(aud)
      .setIssuedAt(now)
      .setExpirationTime(now + 60)
      .setJti(randomToken(12))
      .sign(key);
  };
  return {
    client,
    assertion,
    /** The form fields of private_key_jwt authentication. */
    async fields(aud?: string): Promise<Record<string, string>> {
      return { client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", client_assertion: await assertion(aud) };
    },
  };
}
