import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from "jose";
import { adminApi, BASE_URL } from "./support";

/**
 * A tiny relying party for the browser tests: it registers itself through the management API,
 * serves its redirect URI (GET for query/fragment, POST for form_post), exchanges codes with
 * PKCE at the token endpoint and checks ID tokens against the published key set with jose.
 */
export type Received = { method: string; path: string; params: Record<string, string> };

export class RelyingParty {
  received: Received[] = [];
  clientId = "";
  clientSecret: string | null = null;
  private server!: http.Server;
  redirectUri = "";
  private jwks = createRemoteJWKSet(new URL(BASE_URL + "/oauth/v2/keys"));

  static async start(client: Record<string, unknown> = {}): Promise<RelyingParty> {
    const rp = new RelyingParty();
    rp.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const url = new URL(req.url ?? "/", "http://localhost");
        const params = req.method === "POST" ? new URLSearchParams(Buffer.concat(chunks).toString()) : url.searchParams;
        // The browser's own favicon request, which may come late, is not something we sent.
        if (url.pathname !== "/favicon.ico") {
          rp.received.push({ method: req.method ?? "GET", path: url.pathname, params: Object.fromEntries(params) });
        }
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(`<!doctype html><title>RP</title><h1>Relying party callback</h1><pre id="params">${escape(JSON.stringify(Object.fromEntries(params)))}</pre>`);
      });
    });
    await new Promise<void>((r) => rp.server.listen(0, "127.0.0.1", r));
    rp.redirectUri = `http://localhost:${(rp.server.address() as AddressInfo).port}/cb`;
    const res = await adminApi("/clients", {
      json: {
        name: "E2E Relying Party",
        redirectUris: [rp.redirectUri],
        responseTypes: ["code", "id_token", "id_token token"],
        grantTypes: ["authorization_code", "implicit", "refresh_token"],
        authMethod: "client_secret_basic",
        ...client,
      },
    });
    if (res.status !== 201 && res.status !== 200) throw new Error(`client registration failed: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { clientId: string; clientSecret?: string };
    rp.clientId = body.clientId;
    rp.clientSecret = body.clientSecret ?? null;
    return rp;
  }

  /** A fresh PKCE pair (RFC 7636, S256). */
  static pkce(): { verifier: string; challenge: string } {
    const verifier = randomBytes(32).toString("base64url");
    return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
  }

  authorizeUrl(params: Record<string, string>): string {
    const q = new URLSearchParams({ client_id: this.clientId, redirect_uri: this.redirectUri, response_type: "code", scope: "openid", ...params });
    return `${BASE_URL}/oauth/v2/authorize?${q.toString()}`;
  }

  last(): Received | undefined {
    return this.received[this.received.length - 1];
  }

  async exchange(code: string, verifier?: string): Promise<Record<string, unknown>> {
    const body = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: this.redirectUri });
    if (verifier) body.set("code_verifier", verifier);
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
    if (this.clientSecret) headers.authorization = "Basic " + Buffer.from(`${encodeURIComponent(this.clientId)}:${encodeURIComponent(this.clientSecret)}`).toString("base64");
    else body.set("client_id", this.clientId);
    const res = await fetch(BASE_URL + "/oauth/v2/token", { method: "POST", headers, body });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status !== 200) throw new Error(`token exchange failed: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  async verifyIdToken(idToken: string, nonce?: string): Promise<JWTPayload> {
    const { payload } = await jwtVerify(idToken, this.jwks, { issuer: BASE_URL, audience: this.clientId, algorithms: ["RS256"] });
    if (nonce !== undefined && payload.nonce !== nonce) throw new Error("nonce mismatch");
    return payload;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => {
      this.server.close(() => {
        r();
      });
    });
  }
}

function escape(s: string): string {
  return s.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]!);
}

/** Creates a human user with a password through the management API. */
export async function createUser(username: string, password: string, extra: Record<string, unknown> = {}): Promise<{ id: string }> {
  const res = await adminApi("/users", {
    json: { username, password, email: `${username.replace(/[^a-z0-9]/gi, "")}@example.com`, givenName: username.split(/[^a-z]/i)[0], familyName: "Tester", emailVerified: true, ...extra },
  });
  if (res.status !== 201 && res.status !== 200) throw new Error(`user creation failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string };
}
