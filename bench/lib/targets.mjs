// Starting the three servers the bench compares, and preparing each the same way: three clients
// (cc-jwt, cc-opaque, web), one user signed in once, tokens and a pool of refresh tokens.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { basic, CookieJar, codeFrom, FORM, json, PKCE_CHALLENGE, PKCE_VERIFIER } from "./http.mjs";
import { cpuByProcess, onCleanup, parentPid, startNode } from "./processes.mjs";
import { serverEnv, serverNodeArgs } from "../../scripts/server-node-options.mjs";

export const REDIRECT = "http://127.0.0.1:9/cb";
export const PASSWORD = "correct horse battery staple";

function isPostgresProcess(pid) {
  try {
    return /^postgres/.test(fs.readFileSync(`/proc/${pid}/comm`, "utf8"));
  } catch {
    return false;
  }
}

/**
 * A fresh database on the server of `serverUrl`, dropped at the end, and the process id of that
 * server's postmaster when it runs on this machine (the parent of this connection's backend, read
 * from /proc; null otherwise).
 */
async function freshPgDatabase(serverUrl) {
  const name = `torii_bench_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const backend = (await admin.query("SELECT pg_backend_pid() AS pid")).rows[0].pid;
  // A server in a container or on another machine numbers its processes otherwise: the id is
  // trusted only when this machine's process of that number is a PostgreSQL one.
  const postmaster = isPostgresProcess(backend) ? parentPid(backend) : null;
  await admin.end();
  onCleanup(async () => {
    const c = new pg.Client({ connectionString: serverUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  });
  const u = new URL(serverUrl);
  u.pathname = "/" + name;
  return { url: u.href, postmaster };
}

/** CPU time of the PostgreSQL server of `database` (freshPgDatabase), when it runs on this machine. */
function dbCpuOf(database) {
  return database?.postmaster ? () => cpuByProcess(database.postmaster) : undefined;
}

/**
 * Torii's production build (`node dist/server.mjs`) on a throw-away data folder (PGlite) or a
 * fresh PostgreSQL database; bootstrapped through IDP_ADMIN_PAT and the management API.
 */
export async function startTorii({ root, port, databaseUrl, nodeArgs = [], countRoundTrips = false, label = "torii", workers = "1" }) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-bench-"));
  onCleanup(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const pat = "torii_pat_bench_" + randomBytes(24).toString("hex");
  const issuer = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    PORT: String(port),
    HOSTNAME: "127.0.0.1",
    IDP_ISSUER: issuer,
    IDP_DATA_DIR: dataDir,
    IDP_ADMIN_PAT: pat,
    IDP_LOG_LEVEL: "warn",
    IDP_WORKERS: String(workers),
    ...(countRoundTrips ? { IDP_DEBUG_DB_ROUND_TRIPS: "1" } : {}),
  };
  delete env.DATABASE_URL;
  if (!countRoundTrips) delete env.IDP_DEBUG_DB_ROUND_TRIPS;
  let database;
  if (databaseUrl) {
    database = await freshPgDatabase(databaseUrl);
    env.DATABASE_URL = database.url;
  }
  // As `npm start` runs it (scripts/server-node-options.mjs), with the bench's own options (--cpu-prof).
  const proc = await startNode(label, [...serverNodeArgs(env), ...nodeArgs, "dist/server.mjs"], { cwd: root, env: serverEnv(env), port, readyUrl: issuer + "/readyz" });
  const api = async (method, p, body) => {
    const res = await fetch(issuer + "/management/v1" + p, {
      method,
      headers: { authorization: `Bearer ${pat}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return json(res, `${method} /management/v1${p}`);
  };
  // The JWKS and token endpoints limit each client address (default 300 and 6,000 a minute); the
  // bench is one address.
  // (A build from before rate limits existed, --torii-root, refuses the field: nothing to raise then.)
  await api("PUT", "/settings", { rateLimits: { jwksPerMinute: 10_000_000, tokenPerMinute: 10_000_000 } }).catch((err) => {
    if (!/\b400\b/.test(String(err))) throw err;
  });
  const client = async (id, body) => {
    const c = await api("POST", "/clients", { name: id, authMethod: "client_secret_basic", ...body });
    return { id: c.clientId, secret: c.clientSecret, redirectUri: REDIRECT };
  };
  const clients = {
    ccJwt: await client("cc-jwt", { grantTypes: ["client_credentials"], accessTokenType: "jwt" }),
    ccOpaque: await client("cc-opaque", { grantTypes: ["client_credentials"], accessTokenType: "opaque" }),
    // Opaque like the peer's (its userinfo endpoint takes only those), so the user-bound flows compare like with like.
    web: await client("web", { redirectUris: [REDIRECT], grantTypes: ["authorization_code", "refresh_token"], responseTypes: ["code"], accessTokenType: "opaque" }),
  };
  await api("POST", "/users", { username: "bench", email: "bench@example.com", emailVerified: true, givenName: "Bench", familyName: "User", password: PASSWORD });
  // On PostgreSQL the database's work is another process's CPU time: that server's (the postmaster
  // and every backend and helper process under it) when it runs on this machine. Everything on
  // that server counts, so nothing else should use it during a run.
  const dbCpu = dbCpuOf(database);
  return { name: "torii", proc, issuer, clients, signIn: toriiSignIn, dbCpu };
}

/**
 * node-oidc-provider with its in-memory adapter, or with `databaseUrl` on a fresh database of that
 * PostgreSQL server (bench/servers/peer-pg-adapter.mjs), whose CPU time is then counted as Torii's is.
 */
export async function startPeer({ root, port, databaseUrl, label = "node-oidc-provider" }) {
  const env = { ...process.env, PORT: String(port), NODE_ENV: "production" };
  delete env.PEER_DATABASE_URL;
  let database;
  if (databaseUrl) {
    database = await freshPgDatabase(databaseUrl);
    env.PEER_DATABASE_URL = database.url;
  }
  const proc = await startNode(label, ["bench/servers/peer.mjs"], { cwd: root, env, port, readyLine: "ready" });
  const dbCpu = dbCpuOf(database);
  return { name: "peer", proc, issuer: `http://127.0.0.1:${port}`, clients: await clientsOf(`http://127.0.0.1:${port}`), signIn: peerSignIn, dbCpu };
}

export async function startLimit({ root, port }) {
  const proc = await startNode("limit", ["bench/servers/limit.mjs"], { cwd: root, env: { ...process.env, PORT: String(port) }, port, readyLine: "ready" });
  return { name: "limit", proc, issuer: `http://127.0.0.1:${port}`, clients: await clientsOf(`http://127.0.0.1:${port}`), signIn: limitSignIn };
}

async function clientsOf(issuer) {
  const list = await json(await fetch(issuer + "/bench/clients"), "client list");
  const by = Object.fromEntries(list.map((c) => [c.id, c]));
  return { ccJwt: by["cc-jwt"], ccOpaque: by["cc-opaque"], web: by.web };
}

// ---- signing in without a browser ----

function authorizeUrl(t, { scope, prompt, state = "st" }) {
  const q = new URLSearchParams({ client_id: t.clients.web.id, redirect_uri: REDIRECT, response_type: "code", scope, state, nonce: "n-" + state, code_challenge: PKCE_CHALLENGE, code_challenge_method: "S256" });
  if (prompt) q.set("prompt", prompt);
  return `${t.endpoints.authorization_endpoint}?${q}`;
}

const abs = (t, location) => new URL(location, t.issuer).href;

/** Torii: authorize, then the hosted login's two form steps (login name, password), then the callback. */
async function toriiSignIn(t, jar) {
  let res = await jar.fetch(authorizeUrl(t, { scope: "openid" }));
  const loginPage = res.headers.get("location") ?? "";
  const id = new URL(loginPage, t.issuer).searchParams.get("authRequest");
  if (!id) throw new Error(`torii authorize did not send to the login (${res.status} ${loginPage})`);
  const html = await (await jar.fetch(abs(t, loginPage))).text();
  const csrf = /<input[^>]*name="csrf"[^>]*value="([^"]+)"/.exec(html)?.[1] ?? /<input[^>]*value="([^"]+)"[^>]*name="csrf"/.exec(html)?.[1];
  if (!csrf) throw new Error("no CSRF token on the login page");
  const post = (step, fields) =>
    jar.fetch(`${t.issuer}/ui/login/submit/${step}`, { method: "POST", headers: { "content-type": FORM, origin: t.issuer }, body: new URLSearchParams({ authRequest: id, csrf, ...fields }) });
  res = await post("loginname", { loginName: "bench" });
  res = await post("password", { password: PASSWORD });
  const callback = res.headers.get("location") ?? "";
  if (!callback.startsWith("/oauth/v2/authorize/callback")) throw new Error(`torii sign-in failed: ${res.status} ${callback}`);
  res = await jar.fetch(abs(t, callback));
  codeFrom(res.headers.get("location"), REDIRECT);
}

/** node-oidc-provider: its login and consent interactions (bench/servers/peer.mjs). */
async function peerSignIn(t, jar) {
  await peerCode(t, jar, { scope: "openid", prompt: "consent" });
}

async function limitSignIn(t, jar) {
  const res = await jar.fetch(t.issuer + "/bench/login", { method: "POST", headers: { "content-type": FORM }, body: new URLSearchParams({ username: "bench", password: PASSWORD }) });
  if (res.status !== 204) throw new Error(`limit sign-in failed: ${res.status}`);
}

/** Follows the peer's redirects through its interactions until the code comes back. */
async function peerCode(t, jar, params) {
  let location = authorizeUrl(t, params);
  for (let hop = 0; hop < 12; hop++) {
    if (location.startsWith(REDIRECT)) return codeFrom(location, REDIRECT);
    const m = /\/interaction\/([^/?]+)$/.exec(new URL(location, t.issuer).pathname);
    let res;
    if (m) {
      const { prompt } = await json(await jar.fetch(abs(t, location)), "peer interaction");
      const body = prompt === "login" ? new URLSearchParams({ login: "bench", password: PASSWORD }) : new URLSearchParams();
      res = await jar.fetch(abs(t, `/interaction/${m[1]}/${prompt === "login" ? "login" : "confirm"}`), { method: "POST", headers: { "content-type": FORM }, body });
    } else {
      res = await jar.fetch(abs(t, location));
    }
    location = res.headers.get("location");
    if (!location) throw new Error(`peer flow stopped at ${res.status}: ${(await res.text()).slice(0, 300)}`);
  }
  throw new Error("peer flow: too many redirects");
}

/** One code flow with the signed-in session; returns the token response. */
export async function codeFlowTokens(t, jar, { scope }) {
  let code;
  if (t.name === "peer") {
    // offline_access needs prompt=consent there (OIDC Core 11), which goes through the consent interaction.
    code = await peerCode(t, jar, { scope, prompt: scope.includes("offline_access") ? "consent" : undefined });
  } else {
    const res = await jar.fetch(authorizeUrl(t, { scope }));
    code = codeFrom(res.headers.get("location"), REDIRECT);
  }
  const res = await fetch(t.endpoints.token_endpoint, {
    method: "POST",
    headers: { authorization: basic(t.clients.web.id, t.clients.web.secret), "content-type": FORM },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: PKCE_VERIFIER }),
  });
  return json(res, `${t.name} code exchange`);
}

export async function clientCredentials(t, client) {
  const res = await fetch(t.endpoints.token_endpoint, {
    method: "POST",
    headers: { authorization: basic(client.id, client.secret), "content-type": FORM },
    body: "grant_type=client_credentials",
  });
  return (await json(res, `${t.name} client_credentials`)).access_token;
}

/**
 * Everything the scenarios need from one target: its endpoints (from discovery), a signed-in
 * session, one token of each kind and `poolSize` refresh tokens.
 */
export async function prepare(t, { poolSize }) {
  t.endpoints = await json(await fetch(t.issuer + "/.well-known/openid-configuration"), `${t.name} discovery`);
  t.jar = new CookieJar();
  await t.signIn(t, t.jar);
  t.tokens = {
    ccJwt: await clientCredentials(t, t.clients.ccJwt),
    ccOpaque: await clientCredentials(t, t.clients.ccOpaque),
    user: (await codeFlowTokens(t, t.jar, { scope: "openid profile email" })).access_token,
  };
  t.refreshPool = [];
  for (let i = 0; i < poolSize; i++) {
    const r = await codeFlowTokens(t, t.jar, { scope: "openid offline_access" });
    if (!r.refresh_token) throw new Error(`${t.name}: no refresh token for offline_access`);
    t.refreshPool.push(r.refresh_token);
  }
  return t;
}
