// The peer of `npm run bench`: node-oidc-provider 9 with an in-memory adapter (or, with
// PEER_DATABASE_URL, a PostgreSQL one: peer-pg-adapter.mjs), the same clients
// as Torii gets, one 2048-bit RS256 key, JWT access tokens for the `cc-jwt` client through the
// resource indicators feature (opaque tokens everywhere else: its userinfo endpoint accepts only
// those). The only code around it is the sign-in and consent interaction the harness drives once
// per session (not measured).
//
//   PORT=3252 [PEER_DATABASE_URL=postgres://…] node bench/servers/peer.mjs   (prints "ready <json>" when listening)
import { generateKeyPairSync, randomBytes } from "node:crypto";
import http from "node:http";
import os from "node:os";
import Provider from "oidc-provider";
import { postgresAdapter } from "./peer-pg-adapter.mjs";

const port = Number(process.env.PORT);
const issuer = `http://127.0.0.1:${port}`;
const RESOURCE = "urn:bench:api";
const REDIRECT = "http://127.0.0.1:9/cb";
const jwk = { ...generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" }), kid: "peer-1", alg: "RS256", use: "sig" };
const secret = (id) => `${id}-secret-${randomBytes(16).toString("hex")}`;

const clients = [
  { client_id: "cc-jwt", client_secret: secret("cc-jwt"), grant_types: ["client_credentials"], response_types: [], redirect_uris: [] },
  { client_id: "cc-opaque", client_secret: secret("cc-opaque"), grant_types: ["client_credentials"], response_types: [], redirect_uris: [] },
  { client_id: "web", client_secret: secret("web"), grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], redirect_uris: [REDIRECT] },
].map((c) => ({ ...c, token_endpoint_auth_method: "client_secret_basic" }));

/**
 * A plain in-memory adapter: the one node-oidc-provider ships is an LRU of 1,000 entries, which the
 * load evicts within a second (the setup's session and tokens with it). Expired entries are
 * dropped when read and by a sweep every 10 s.
 */
const stores = new Map();
const grants = new Map(); // grantId -> Set of "Model:id" keys
class MemoryAdapter {
  constructor(model) {
    this.model = model;
    if (!stores.has(model)) stores.set(model, new Map());
    this.store = stores.get(model);
  }
  async upsert(id, payload, expiresIn) {
    this.store.set(id, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
    if (payload.grantId) {
      if (!grants.has(payload.grantId)) grants.set(payload.grantId, new Set());
      grants.get(payload.grantId).add(`${this.model}:${id}`);
    }
  }
  async find(id) {
    const e = this.store.get(id);
    if (!e) return undefined;
    if (e.expiresAt <= Date.now()) return void this.store.delete(id);
    return e.payload;
  }
  async findByUid(uid) {
    for (const [id, e] of this.store) if (e.payload.uid === uid) return this.find(id);
    return undefined;
  }
  async findByUserCode() {
    return undefined;
  }
  async consume(id) {
    const e = this.store.get(id);
    if (e) e.payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id) {
    this.store.delete(id);
  }
  async revokeByGrantId(grantId) {
    for (const key of grants.get(grantId) ?? []) {
      const i = key.indexOf(":");
      stores.get(key.slice(0, i))?.delete(key.slice(i + 1));
    }
    grants.delete(grantId);
  }
}
setInterval(() => {
  const now = Date.now();
  for (const store of stores.values()) for (const [id, e] of store) if (e.expiresAt <= now) store.delete(id);
}, 10_000).unref();

const user = { sub: "user-bench", name: "Bench User", email: "bench@example.com", email_verified: true, password: "correct horse battery staple" };

// Four connections a core: node-postgres runs one statement at a time on each, and a refresh or a
// code exchange is several statements in a row.
const adapter = process.env.PEER_DATABASE_URL ? await postgresAdapter(process.env.PEER_DATABASE_URL, 4 * os.cpus().length) : MemoryAdapter;

const provider = new Provider(issuer, {
  adapter,
  clients,
  jwks: { keys: [jwk] },
  cookies: { keys: [randomBytes(32).toString("hex")] },
  claims: { openid: ["sub"], profile: ["name"], email: ["email", "email_verified"] },
  scopes: ["openid", "offline_access", "profile", "email", "api"],
  findAccount: (_ctx, id) => (id === user.sub ? { accountId: id, claims: () => ({ sub: id, name: user.name, email: user.email, email_verified: user.email_verified }) } : undefined),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // Only the cc-jwt client gets a resource server (hence JWT access tokens); the others keep opaque ones.
      defaultResource: (_ctx, client, oneOf) => oneOf ?? (client.clientId === "cc-jwt" ? RESOURCE : undefined),
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({ scope: "api", audience: RESOURCE, accessTokenTTL: 3600, accessTokenFormat: "jwt", jwt: { sign: { alg: "RS256" } } }),
    },
  },
  pkce: { required: () => true },
  rotateRefreshToken: true,
  ttl: { AccessToken: 3600, ClientCredentials: 3600, AuthorizationCode: 60, IdToken: 3600, RefreshToken: 86400, Grant: 86400, Session: 86400, Interaction: 600 },
});
provider.on("server_error", (_ctx, err) => console.error("peer server_error", err));

const callback = provider.callback();

async function readForm(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return new URLSearchParams(Buffer.concat(chunks).toString());
}

// The interaction the harness drives: GET tells which prompt is pending; POST .../login checks the
// password; POST .../confirm grants what the client asked for.
async function interaction(req, res, uid, action) {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) throw new Error("interaction mismatch");
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify({ prompt: details.prompt.name }));
  }
  if (action === "login") {
    const form = await readForm(req);
    if (form.get("login") !== "bench" || form.get("password") !== user.password) {
      return provider.interactionFinished(req, res, { error: "access_denied" }, { mergeWithLastSubmission: false });
    }
    return provider.interactionFinished(req, res, { login: { accountId: user.sub } }, { mergeWithLastSubmission: false });
  }
  if (action === "confirm") {
    const { prompt, params, session, grantId } = details;
    const grant = grantId ? await provider.Grant.find(grantId) : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    if (prompt.details.missingOIDCScope) grant.addOIDCScope(prompt.details.missingOIDCScope.join(" "));
    if (prompt.details.missingOIDCClaims) grant.addOIDCClaims(prompt.details.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(prompt.details.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(" "));
    return provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
  }
  res.writeHead(404).end();
}

const server = http.createServer((req, res) => {
  const m = /^\/interaction\/([^/?]+)(?:\/(login|confirm))?$/.exec(req.url.split("?")[0]);
  if (m) {
    return interaction(req, res, m[1], m[2]).catch((err) => {
      console.error("interaction failed", err);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  }
  if (req.url === "/bench/clients") {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify(clients.map((c) => ({ id: c.client_id, secret: c.client_secret, redirectUri: REDIRECT }))));
  }
  callback(req, res);
});
server.keepAliveTimeout = 65_000;
server.listen(port, "127.0.0.1", () => console.log("ready " + JSON.stringify({ issuer })));
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(0));
