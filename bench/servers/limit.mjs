// The "limit" server of `npm run bench`: plain node:http doing only the work no implementation of
// each scenario can skip (parse the request, check the client secret's hash, look a token up in a
// Map, sign or verify one RS256 JWT per token, hash opaque tokens before storing them), with the
// same 2048-bit RSA key size as Torii. No database, no framework, no logging: the ceiling.
//
//   PORT=3251 node bench/servers/limit.mjs   (prints "ready <json>" when listening)
import { createHash, generateKeyPairSync, randomBytes, sign, timingSafeEqual, verify } from "node:crypto";
import http from "node:http";

const port = Number(process.env.PORT);
const issuer = `http://127.0.0.1:${port}`;
const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const kid = "limit-1";
const jwks = JSON.stringify({ keys: [{ ...publicKey.export({ format: "jwk" }), kid, alg: "RS256", use: "sig" }] });
const discovery = JSON.stringify({
  issuer,
  authorization_endpoint: `${issuer}/authorize`,
  token_endpoint: `${issuer}/token`,
  introspection_endpoint: `${issuer}/introspect`,
  userinfo_endpoint: `${issuer}/userinfo`,
  jwks_uri: `${issuer}/jwks`,
  response_types_supported: ["code"],
  grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
  subject_types_supported: ["public"],
  id_token_signing_alg_values_supported: ["RS256"],
  token_endpoint_auth_methods_supported: ["client_secret_basic"],
  code_challenge_methods_supported: ["S256"],
  scopes_supported: ["openid", "profile", "email", "offline_access"],
});

const sha256 = (v) => createHash("sha256").update(v).digest();
const b64u = (v) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");
const opaque = () => randomBytes(32).toString("base64url");
const now = () => Math.floor(Date.now() / 1000);

// Clients: secrets stored as SHA-256, like Torii's.
const secret = (id) => `${id}-secret-${randomBytes(16).toString("hex")}`;
const clients = new Map();
for (const [id, tokenType] of [["cc-jwt", "jwt"], ["cc-opaque", "opaque"], ["web", "opaque"]]) {
  const s = secret(id);
  clients.set(id, { id, secret: s, hash: sha256(s), tokenType, redirectUri: "http://127.0.0.1:9/cb" });
}
const user = { sub: "user-bench", name: "Bench User", email: "bench@example.com", email_verified: true, password: "correct horse battery staple" };

const sessions = new Map(); // cookie value -> { sub, authTime }
const codes = new Map(); // code -> { clientId, redirectUri, challenge, scope, sub, nonce, authTime }
const accessTokens = new Map(); // sha256(token) -> { clientId, sub, scope, exp }
const refreshTokens = new Map(); // sha256(token) -> { clientId, sub, scope }
const revokedJtis = new Set();

function jwt(typ, payload) {
  const input = `${b64u({ alg: "RS256", typ, kid })}.${b64u(payload)}`;
  return `${input}.${sign("sha256", Buffer.from(input), privateKey).toString("base64url")}`;
}

function verifyJwt(token) {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  if (!verify("sha256", Buffer.from(`${parts[0]}.${parts[1]}`), publicKey, Buffer.from(parts[2], "base64url"))) return null;
  const payload = JSON.parse(Buffer.from(parts[1], "base64url").toString());
  return payload.exp > now() && payload.iss === issuer ? payload : null;
}

function authenticate(req) {
  const auth = req.headers.authorization ?? "";
  if (!auth.startsWith("Basic ")) return null;
  const decoded = Buffer.from(auth.slice(6), "base64").toString();
  const i = decoded.indexOf(":");
  const client = clients.get(decodeURIComponent(decoded.slice(0, i)));
  if (!client) return null;
  return timingSafeEqual(sha256(decodeURIComponent(decoded.slice(i + 1))), client.hash) ? client : null;
}

function accessToken(client, sub, scope) {
  const iat = now();
  if (client.tokenType === "jwt") {
    return jwt("at+jwt", { iss: issuer, sub: sub ?? client.id, aud: issuer, client_id: client.id, scope, iat, exp: iat + 3600, jti: opaque() });
  }
  const token = opaque();
  accessTokens.set(sha256(token).toString("base64url"), { clientId: client.id, sub, scope, exp: iat + 3600 });
  return token;
}

function userTokens(client, sub, scope, nonce, authTime) {
  const body = { access_token: accessToken(client, sub, scope), token_type: "Bearer", expires_in: 3600, scope };
  const scopes = scope.split(" ");
  if (scopes.includes("offline_access")) {
    body.refresh_token = opaque();
    refreshTokens.set(sha256(body.refresh_token).toString("base64url"), { clientId: client.id, sub, scope, authTime });
  }
  if (scopes.includes("openid")) {
    const iat = now();
    body.id_token = jwt("JWT", { iss: issuer, sub, aud: client.id, iat, exp: iat + 3600, auth_time: authTime, ...(nonce && { nonce }) });
  }
  return body;
}

function send(res, status, body, headers = {}) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}
const oauthError = (res, status, error) => send(res, status, { error });

function token(req, res, form) {
  const client = authenticate(req);
  if (!client) return oauthError(res, 401, "invalid_client");
  switch (form.get("grant_type")) {
    case "client_credentials": {
      if (client.id === "web") return oauthError(res, 400, "unauthorized_client");
      const scope = form.get("scope") ?? "";
      return send(res, 200, { access_token: accessToken(client, undefined, scope), token_type: "Bearer", expires_in: 3600, scope });
    }
    case "authorization_code": {
      const key = form.get("code") ?? "";
      const code = codes.get(key);
      if (!code) return oauthError(res, 400, "invalid_grant");
      codes.delete(key);
      const challenge = sha256(form.get("code_verifier") ?? "").toString("base64url");
      if (code.clientId !== client.id || code.redirectUri !== form.get("redirect_uri") || challenge !== code.challenge) return oauthError(res, 400, "invalid_grant");
      return send(res, 200, userTokens(client, code.sub, code.scope, code.nonce, code.authTime));
    }
    case "refresh_token": {
      const key = sha256(form.get("refresh_token") ?? "").toString("base64url");
      const rt = refreshTokens.get(key);
      if (!rt || rt.clientId !== client.id) return oauthError(res, 400, "invalid_grant");
      refreshTokens.delete(key); // rotation: the presented token is spent
      return send(res, 200, userTokens(client, rt.sub, rt.scope, undefined, rt.authTime));
    }
    default:
      return oauthError(res, 400, "unsupported_grant_type");
  }
}

function introspect(req, res, form) {
  const client = authenticate(req);
  if (!client) return oauthError(res, 401, "invalid_client");
  const value = form.get("token") ?? "";
  if (value.split(".").length === 3) {
    const p = verifyJwt(value);
    if (!p || revokedJtis.has(p.jti)) return send(res, 200, { active: false });
    return send(res, 200, { active: true, client_id: p.client_id, sub: p.sub, scope: p.scope, exp: p.exp, iat: p.iat, iss: p.iss, token_type: "Bearer" });
  }
  const t = accessTokens.get(sha256(value).toString("base64url"));
  if (!t || t.exp <= now()) return send(res, 200, { active: false });
  return send(res, 200, { active: true, client_id: t.clientId, sub: t.sub ?? t.clientId, scope: t.scope, exp: t.exp, iss: issuer, token_type: "Bearer" });
}

function userinfo(req, res) {
  const auth = req.headers.authorization ?? "";
  const t = auth.startsWith("Bearer ") ? accessTokens.get(sha256(auth.slice(7)).toString("base64url")) : undefined;
  if (!t || !t.sub || t.exp <= now()) return send(res, 401, { error: "invalid_token" }, { "www-authenticate": 'Bearer error="invalid_token"' });
  const scopes = t.scope.split(" ");
  return send(res, 200, {
    sub: t.sub,
    ...(scopes.includes("profile") && { name: user.name }),
    ...(scopes.includes("email") && { email: user.email, email_verified: user.email_verified }),
  });
}

function authorize(req, res, url) {
  const q = url.searchParams;
  const client = clients.get(q.get("client_id") ?? "");
  if (!client || q.get("redirect_uri") !== client.redirectUri) return oauthError(res, 400, "invalid_request");
  const cookie = /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? "")?.[1];
  const session = cookie ? sessions.get(cookie) : undefined;
  const target = new URL(client.redirectUri);
  if (q.get("state")) target.searchParams.set("state", q.get("state"));
  if (!session) target.searchParams.set("error", "login_required");
  else if (q.get("response_type") !== "code" || q.get("code_challenge_method") !== "S256" || !q.get("code_challenge")) target.searchParams.set("error", "invalid_request");
  else {
    const code = opaque();
    codes.set(code, { clientId: client.id, redirectUri: client.redirectUri, challenge: q.get("code_challenge"), scope: q.get("scope") ?? "openid", sub: session.sub, nonce: q.get("nonce"), authTime: session.authTime });
    target.searchParams.set("code", code);
  }
  res.writeHead(303, { location: target.href, "content-length": 0 });
  res.end();
}

// Sign-in for the harness's setup (not measured): the password, then a session cookie.
function login(req, res, form) {
  if (form.get("username") !== "bench" || form.get("password") !== user.password) return oauthError(res, 401, "invalid_credentials");
  const sid = opaque();
  sessions.set(sid, { sub: user.sub, authTime: now() });
  res.writeHead(204, { "set-cookie": `sid=${sid}; Path=/; HttpOnly` });
  res.end();
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, issuer);
  if (req.method === "GET") {
    switch (url.pathname) {
      case "/.well-known/openid-configuration":
        return send(res, 200, discovery, { "cache-control": "public, max-age=300" });
      case "/jwks":
        return send(res, 200, jwks, { "content-type": "application/jwk-set+json", "cache-control": "public, max-age=300" });
      case "/authorize":
        return authorize(req, res, url);
      case "/userinfo":
        return userinfo(req, res);
      case "/bench/clients":
        return send(res, 200, [...clients.values()].map((c) => ({ id: c.id, secret: c.secret, redirectUri: c.redirectUri })));
    }
    return oauthError(res, 404, "not_found");
  }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const form = new URLSearchParams(Buffer.concat(chunks).toString());
    if (url.pathname === "/token") return token(req, res, form);
    if (url.pathname === "/introspect") return introspect(req, res, form);
    if (url.pathname === "/bench/login") return login(req, res, form);
    return oauthError(res, 404, "not_found");
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, "127.0.0.1", () => console.log("ready " + JSON.stringify({ issuer })));
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(0));
