import http from "node:http";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAST_ROUTES } from "@/lib/server/routes";
import { makeUser } from "./authorize-support";
import { startTestInstance, type TestInstance } from "./harness";
import { NEXT_ROUTES } from "./next-routes";
import { makeClient } from "./token-support";

/**
 * Issue 16, "Done when": generated hostile requests over every endpoint the test instance serves
 * (the fast routes, the route handlers Next serves, every management operation from the OpenAPI
 * document). Random methods, malformed, huge, NUL and unicode parameters, bad content types and
 * Basic headers, bad JSON, repeated parameters, forged JWTs. Any 5xx fails. The seed is fixed,
 * so a failure reproduces; FUZZ_SEED and FUZZ_COUNT choose others.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 16_2026);
const COUNT = Number(process.env.FUZZ_COUNT ?? 3200);
const CONCURRENCY = 8;

/** mulberry32: small, fast, deterministic. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
    chance: (p: number) => next() < p,
  };
}
type Rng = ReturnType<typeof rng>;

let t: TestInstance;
let fixtures: { clientId: string; secret: string; userId: string; forged: string[] };
const managementOps: { method: string; path: string }[] = [];

beforeAll(async () => {
  t = await startTestInstance({}, { nextRoutes: true });
  const { client, secret } = await makeClient(t, { authMethod: "client_secret_basic" });
  const user = await makeUser(t, "fuzzuser");
  const key = new TextEncoder().encode("k".repeat(32));
  const claims = [{ sub: "a\u0000b", iss: "x" }, { sub: client.id, iss: client.id, aud: t.issuer }, { sub: "😀".repeat(50) }, { sub: 42 }, {}];
  const forged: string[] = [];
  for (const c of claims) {
    forged.push(await new SignJWT(c as Record<string, unknown>).setProtectedHeader({ alg: "HS256", kid: "k\u0000" }).sign(key));
    const body = Buffer.from(JSON.stringify(c)).toString("base64url");
    forged.push(`${Buffer.from('{"alg":"none"}').toString("base64url")}.${body}.`);
    forged.push(`${Buffer.from('{"alg":"RS256","kid":"../../etc"}').toString("base64url")}.${body}.${"A".repeat(342)}`);
  }
  fixtures = { clientId: client.id, secret: secret!, userId: user.id, forged };
  const doc = await (await t.api("/management/v1/openapi.json")).json();
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(ops)) managementOps.push({ method: method.toUpperCase(), path: "/management/v1" + path });
  }
}, 120_000);
afterAll(() => t.close());

const HOSTILE = [
  "\u0000",
  "a\u0000b",
  "%00",
  "%",
  "%zz",
  "%E0%A4%A",
  "\uD800",
  "\uFFFF",
  "😀",
  "ﷺ".repeat(30),
  "'; DROP TABLE users; --",
  "../../../../etc/passwd",
  "${jndi:ldap://x}",
  "<script>alert(1)</script>",
  "javascript:alert(1)",
  "https://evil.example/cb",
  "__proto__",
  "constructor",
  "-1",
  "0",
  "99999999999999999999999",
  "1e309",
  "NaN",
  "true",
  "null",
  "[]",
  "{}",
  " ",
  "",
  "\r\n",
  "a".repeat(300),
  "b".repeat(5000),
  "c".repeat(70_000),
];

function value(r: Rng): string {
  if (r.chance(0.15)) return r.pick(fixtures.forged);
  if (r.chance(0.1)) return r.pick([fixtures.clientId, fixtures.userId, fixtures.secret]);
  const v = r.pick(HOSTILE);
  return r.chance(0.2) ? v + r.pick(HOSTILE) : v;
}

const PARAMS = [
  "grant_type", "client_id", "client_secret", "client_assertion", "client_assertion_type", "code", "redirect_uri", "refresh_token",
  "scope", "token", "token_type_hint", "assertion", "subject_token", "subject_token_type", "actor_token", "audience", "resource",
  "response_type", "response_mode", "state", "nonce", "prompt", "max_age", "login_hint", "id_token_hint", "code_challenge",
  "code_challenge_method", "ui_locales", "request", "request_uri", "post_logout_redirect_uri", "logout_hint", "authRequest",
  "csrf", "loginName", "password", "username", "email", "access_token", "id", "limit", "offset", "action", "q",
];
const GRANTS = ["authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer", "urn:ietf:params:oauth:grant-type:token-exchange"];

/** encodeURIComponent, except that a lone surrogate is sent as the (invalid UTF-8) bytes of its code unit. */
function pct(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return Array.from(s).map((c) => (c.length === 1 && c.charCodeAt(0) >= 0xd800 && c.charCodeAt(0) <= 0xdfff ? "%ED%A0%80" : encodeURIComponent(c))).join("");
  }
}

function form(r: Rng): string {
  const parts: string[] = [];
  const n = 1 + r.int(8);
  for (let i = 0; i < n; i++) {
    const name = r.chance(0.9) ? r.pick(PARAMS) : value(r);
    const v = name === "grant_type" && r.chance(0.7) ? r.pick(GRANTS) : value(r);
    const enc = r.chance(0.85) ? pct : (s: string) => s;
    parts.push(`${enc(name)}=${enc(v)}`);
    if (r.chance(0.1)) parts.push(parts[parts.length - 1]!); // repeated parameter
  }
  return parts.join("&");
}

function jsonValue(r: Rng, depth = 0): unknown {
  const k = r.int(depth > 3 ? 4 : 7);
  if (k === 0) return value(r);
  if (k === 1) return r.pick([0, -1, 1.5, 1e308, Number.MAX_SAFE_INTEGER, true, false, null]);
  if (k === 2) return value(r);
  if (k === 3) return [value(r)];
  if (k === 4) return Array.from({ length: r.int(4) }, () => jsonValue(r, depth + 1));
  const o: Record<string, unknown> = {};
  const keys = ["username", "email", "name", "givenName", "familyName", "password", "redirectUris", "grantTypes", "responseTypes", "authMethod", "roles", "jwks", "keys", "logo", "primaryDomain", "defaultLocale", "rateLimits", "lifetimes", "lockoutPolicy", "passwordPolicy", "branding", "type", "state", "expiresAt", "scopes", "__proto__"];
  for (let i = 0; i < 1 + r.int(5); i++) o[r.chance(0.9) ? r.pick(keys) : value(r)] = jsonValue(r, depth + 1);
  return o;
}

function body(r: Rng): { type?: string; data: string | Buffer } {
  switch (r.int(7)) {
    case 0:
    case 1:
    case 2:
      return { type: r.pick(["application/x-www-form-urlencoded", "application/x-www-form-urlencoded; charset=utf-8", "APPLICATION/X-WWW-FORM-URLENCODED"]), data: form(r) };
    case 3:
      return { type: r.pick(["application/json", "application/json; charset=utf-8"]), data: JSON.stringify(jsonValue(r)) };
    case 4:
      return { type: r.pick(["application/json", "application/x-www-form-urlencoded"]), data: r.pick(['{"a":', "{{{{", '{"a":"\\u0000"}', "[".repeat(5000), "\u0000\u0001\u0002", '{"__proto__":{"admin":true}}']) };
    case 5:
      return { type: r.pick(["multipart/form-data; boundary=x", "text/plain", "application/xml", "image/svg+xml", "garbage/;;;", ""]), data: form(r) };
    default:
      return { type: r.chance(0.5) ? undefined : "application/octet-stream", data: Buffer.from(Array.from({ length: r.int(2000) }, () => r.int(256))) };
  }
}

/** RFC 6749 2.3.1 Basic credentials, whatever the id and secret hold. */
const basicOf = (id: string, secret: string) => "Basic " + Buffer.from(`${pct(id)}:${pct(secret)}`).toString("base64");

function authorization(r: Rng): string | undefined {
  switch (r.int(8)) {
    case 0:
      return undefined;
    case 1:
      return basicOf(r.chance(0.5) ? fixtures.clientId : value(r), r.chance(0.5) ? fixtures.secret : value(r));
    case 2:
      return "Basic " + r.pick(["", "!!!", "Og==", Buffer.from("\u0000:\u0000").toString("base64"), Buffer.from("a").toString("base64"), "A".repeat(10_000), Buffer.from(`${fixtures.clientId}:%00`).toString("base64")]);
    case 3:
      return "Bearer " + r.pick(fixtures.forged);
    case 4:
      return "Bearer " + r.pick(["", "x", "a b", "torii_pat_" + "x".repeat(40), t.adminPat + "x", "%00"]);
    case 5:
    case 6:
      return `Bearer ${t.adminPat}`;
    default:
      return r.pick(["Digest x", "Basic", "Bearer", "basic " + Buffer.from("a:b").toString("base64"), "Negotiate abc"]);
  }
}

/** Header values must be printable for Node to send them; hostile ones are percent-encoded. */
const printable = (s: string) => (/^[\t\x20-\x7e]*$/.test(s) ? s : pct(s));

function target(r: Rng): { method: string; path: string } {
  const kind = r.int(10);
  let method = r.pick(["GET", "POST", "POST", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "FOO", "CONNECT"]);
  let path: string;
  if (kind < 3) path = r.pick(Object.keys(FAST_ROUTES));
  else if (kind < 6) path = r.pick(Object.keys(NEXT_ROUTES));
  else {
    // Signing-key rotation generates an RSA key per call: a few of them say all there is to say.
    const op = r.pick(managementOps.filter((o) => !o.path.endsWith("/keys/rotate") || r.chance(0.05)));
    if (r.chance(0.7)) method = op.method;
    path = op.path.replace(/\{[^}]+\}/g, () => pct(r.chance(0.3) ? r.pick([fixtures.userId, fixtures.clientId]) : value(r).slice(0, 300)));
  }
  if (r.chance(0.08)) path += r.pick(["/", "//", "/..", "/%2e%2e", "/%00", "/x", ";x", "%"]);
  if (method === "GET" || r.chance(0.3)) path += "?" + form(r);
  return { method, path };
}

type Result = { status: number; method: string; path: string; detail: string };

function send(agent: http.Agent, r: Rng): Promise<Result | null> {
  const { method, path } = target(r);
  const hasBody = !["GET", "HEAD"].includes(method) || r.chance(0.05);
  const b = hasBody ? body(r) : undefined;
  const headers: Record<string, string> = {};
  const auth = authorization(r);
  if (auth) headers.authorization = printable(auth);
  if (b?.type !== undefined) headers["content-type"] = b.type;
  if (r.chance(0.15)) headers.origin = r.pick(["null", "https://evil.example", t.baseUrl, "garbage"]);
  if (r.chance(0.1)) headers["next-action"] = r.pick(["x", "0".repeat(42), "%00"]);
  if (r.chance(0.15)) headers.cookie = printable(`${r.pick(["__Host-torii_ua", "torii_ua", "torii_console", "NEXT_LOCALE"])}=${value(r).slice(0, 3000)}`);
  if (r.chance(0.1)) headers["x-forwarded-for"] = r.pick(["1.2.3.4", "garbage, ::1", "999.1.1.1"]);
  if (r.chance(0.05)) headers["accept-language"] = printable(value(r).slice(0, 500));
  const data = b ? (typeof b.data === "string" ? Buffer.from(b.data) : b.data) : undefined;
  const { hostname, port } = new URL(t.baseUrl);
  return new Promise((resolve) => {
    let req: http.ClientRequest;
    try {
      req = http.request({ host: hostname, port, method, path, headers, agent }, (res) => {
        res.resume();
        res.on("end", () => { resolve({ status: res.statusCode ?? 0, method, path: path.slice(0, 200), detail: `${headers["content-type"] ?? ""} ${(data ?? "").toString().slice(0, 200)}` }); },
        );
        res.on("error", () => { resolve({ status: 0, method, path, detail: "response error" }); });
      });
    } catch {
      resolve(null); return; // a request Node itself will not send (an invalid path or header)
    }
    // No answer at all is a failure too (status -1), reported with the 5xx.
    req.setTimeout(15_000, () => {
      resolve({ status: -1, method, path: path.slice(0, 200), detail: `no answer: ${headers["content-type"] ?? ""} ${(data ?? "").toString().slice(0, 200)}` });
      req.destroy();
    });
    // The server may answer and close before the body is sent (413, a refused method): not a failure.
    req.on("error", () => { resolve({ status: 0, method, path, detail: "connection closed" }); });
    req.on("close", () => setTimeout(() => { resolve({ status: 0, method, path, detail: "connection closed" }); }, 100));
    req.end(data);
  });
}

describe("fuzz: hostile requests over every endpoint", () => {
  it(`${COUNT} generated requests (seed ${SEED}) get no 5xx`, async () => {
    const r = rng(SEED);
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const failures: Result[] = [];
    const timing = new Map<string, number>();
    const t0 = Date.now();
    const statuses = new Map<number, number>();
    let sent = 0;
    let attempts = 0;
    const worker = async () => {
      while (sent < COUNT && attempts < COUNT * 2) {
        attempts++;
        const began = Date.now();
        const res = await send(agent, r);
        if (process.env.FUZZ_DEBUG && res) {
          const group = `${res.method} ${res.path.split("?")[0]!.replace(/\/management\/v1\/(\w+).*/, "/management/v1/$1")}`;
          timing.set(group, (timing.get(group) ?? 0) + Date.now() - began);
          if (sent % 250 === 0) console.log(`${sent} sent, ${Date.now() - t0} ms`);
        }
        if (!res) continue;
        sent++;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status >= 500 || res.status === -1) failures.push(res);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    agent.destroy();
    if (process.env.FUZZ_DEBUG) console.log([...timing].sort((a, b) => b[1] - a[1]).slice(0, 15));
    expect(sent).toBeGreaterThanOrEqual(3000);
    expect(failures.slice(0, 10)).toEqual([]);
    // The requests reached handlers and got varied answers, not one blanket refusal.
    expect([...statuses.keys()].filter((s) => s >= 200 && s < 500).length).toBeGreaterThan(6);
  }, 180_000);
});

describe("management API: nesting", () => {
  it("a body nested thousands of levels deep is a 400 naming the limit, not a 500 (found by a probe: 10 KB of brackets)", async () => {
    for (const body of ["[".repeat(5000) + "]".repeat(5000), '{"a":'.repeat(5000) + "1" + "}".repeat(5000)]) {
      const res = await t.api("/management/v1/clients", { method: "POST", headers: { "content-type": "application/json" }, body });
      expect(res.status).toBe(400);
      expect((await res.json()).fields).toEqual([expect.objectContaining({ code: "too_deeply_nested" })]);
    }
    // Nesting a real resource could use is untouched: this one fails validation, not the depth check.
    const shallow = await t.api("/management/v1/clients", { method: "POST", json: { name: "c", redirectUris: [[[["https://rp.example/cb"]]]] } });
    expect(shallow.status).toBe(400);
    expect(JSON.stringify(await shallow.json())).not.toContain("too_deeply_nested");
  });
});
