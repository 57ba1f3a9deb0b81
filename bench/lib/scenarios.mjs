// The scenarios: each a short sequence of HTTP steps against a prepared target. The same steps
// drive the correctness probe (fetch, full checks, before any measuring), the round-trip count and
// the load (autocannon, where every answer is still checked for its status and key field).
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { basic, codeFrom, FORM, headerOf, PKCE_CHALLENGE, PKCE_VERIFIER } from "./http.mjs";
import { REDIRECT } from "./targets.mjs";

const pathOf = (url) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

async function verifyJwt(t, token, typ) {
  const header = decodeProtectedHeader(token);
  if (header.alg !== "RS256") throw new Error(`alg ${header.alg}, expected RS256`);
  if (typ && header.typ?.toLowerCase() !== typ) throw new Error(`typ ${header.typ}, expected ${typ}`);
  const jwks = await (await fetch(t.endpoints.jwks_uri)).json();
  await jwtVerify(token, createLocalJWKSet(jwks), { issuer: t.endpoints.issuer });
}

const parse = (text) => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

function tokenStep(t, client, body, probe) {
  return {
    name: "token",
    method: "POST",
    path: pathOf(t.endpoints.token_endpoint),
    headers: { authorization: basic(client.id, client.secret), "content-type": FORM },
    body,
    status: 200,
    ok: (text) => text.includes('"access_token"'),
    probe,
  };
}

export const SCENARIOS = [
  {
    id: "cc_jwt",
    title: "client_credentials, Basic, RS256 JWT access token",
    steps: (t) => [
      tokenStep(t, t.clients.ccJwt, () => "grant_type=client_credentials", async (b) => verifyJwt(t, b.access_token, "at+jwt")),
    ],
  },
  {
    id: "cc_opaque",
    title: "client_credentials, Basic, opaque access token",
    steps: (t) => [
      tokenStep(t, t.clients.ccOpaque, () => "grant_type=client_credentials", async (b) => {
        if (b.access_token.split(".").length === 3) throw new Error("expected an opaque token, got a JWT");
      }),
    ],
  },
  {
    id: "refresh",
    title: "refresh_token rotation (a fresh token each request), Basic",
    steps: (t) => [
      {
        ...tokenStep(t, t.clients.web, (ctx) => `grant_type=refresh_token&refresh_token=${encodeURIComponent((ctx.rt = t.refreshPool.shift() ?? "pool-empty"))}`),
        ok: (text) => {
          const rt = parse(text)?.refresh_token;
          if (!rt) return false;
          t.refreshPool.push(rt); // rotation gives the next one
          return true;
        },
        probe: async (b, ctx) => {
          if (b.refresh_token === ctx.rt) throw new Error("the refresh token was not rotated");
          if (b.id_token) await verifyJwt(t, b.id_token);
        },
      },
    ],
  },
  {
    id: "introspect_opaque",
    title: "introspection of an opaque access token, Basic",
    steps: (t) => [introspectStep(t, t.tokens.ccOpaque)],
  },
  {
    id: "introspect_jwt",
    title: "introspection of a JWT access token, Basic",
    peerMissing: "node-oidc-provider keeps no record of JWT access tokens and answers active:false; its resource servers verify them themselves",
    steps: (t) => [introspectStep(t, t.tokens.ccJwt)],
  },
  {
    id: "userinfo",
    title: "userinfo, GET, Bearer (opaque) access token",
    steps: (t) => [
      {
        name: "userinfo",
        method: "GET",
        path: pathOf(t.endpoints.userinfo_endpoint),
        headers: { authorization: `Bearer ${t.tokens.user}` },
        status: 200,
        ok: (text) => text.includes('"sub"'),
        probe: async (b) => {
          if (!b.sub || !b.email) throw new Error(`userinfo without sub or email: ${JSON.stringify(b)}`);
        },
      },
    ],
  },
  {
    id: "code_flow",
    title: "authorization code flow with PKCE: authorize (session cookie) + token, Basic",
    steps: (t) => {
      const q = new URLSearchParams({ client_id: t.clients.web.id, redirect_uri: REDIRECT, response_type: "code", scope: "openid", state: "st", nonce: "nc", code_challenge: PKCE_CHALLENGE, code_challenge_method: "S256" });
      return [
        {
          name: "authorize",
          method: "GET",
          path: `${pathOf(t.endpoints.authorization_endpoint)}?${q}`,
          headers: () => ({ cookie: t.jar.header() }),
          status: [302, 303],
          ok: (_text, headers, ctx) => {
            try {
              ctx.code = codeFrom(headerOf(headers, "location"), REDIRECT);
              return true;
            } catch {
              return false;
            }
          },
        },
        {
          ...tokenStep(t, t.clients.web, (ctx) => new URLSearchParams({ grant_type: "authorization_code", code: ctx.code ?? "none", redirect_uri: REDIRECT, code_verifier: PKCE_VERIFIER }).toString()),
          ok: (text) => text.includes('"id_token"'),
          probe: async (b) => verifyJwt(t, b.id_token),
        },
      ];
    },
  },
  {
    id: "jwks",
    title: "JWKS (signing keys), GET",
    steps: (t) => [
      {
        name: "jwks",
        method: "GET",
        path: pathOf(t.endpoints.jwks_uri),
        status: 200,
        ok: (text) => text.includes('"keys"'),
        probe: async (b) => {
          const rsa = b.keys.filter((k) => k.kty === "RSA");
          if (!rsa.length || rsa.some((k) => Buffer.from(k.n, "base64url").length !== 256)) throw new Error("expected 2048-bit RSA keys");
        },
      },
    ],
  },
  {
    id: "discovery",
    title: "OpenID discovery document, GET",
    steps: (t) => [
      {
        name: "discovery",
        method: "GET",
        path: "/.well-known/openid-configuration",
        status: 200,
        ok: (text) => text.includes('"issuer"'),
        probe: async (b) => {
          if (b.issuer !== t.issuer) throw new Error(`issuer ${b.issuer}`);
        },
      },
    ],
  },
];

function introspectStep(t, token) {
  const client = token === t.tokens.ccJwt ? t.clients.ccJwt : t.clients.ccOpaque;
  return {
    name: "introspect",
    method: "POST",
    path: pathOf(t.endpoints.introspection_endpoint),
    headers: { authorization: basic(client.id, client.secret), "content-type": FORM },
    body: () => `token=${encodeURIComponent(token)}`,
    status: 200,
    // A benchmark of "inactive" answers would measure nothing: the token must come back active.
    ok: (text) => /"active":\s*true/.test(text),
  };
}

const value = (v, ctx) => (typeof v === "function" ? v(ctx) : v);
const statusOk = (step, status) => (Array.isArray(step.status) ? step.status.includes(status) : step.status === status);

/** Runs the steps once with fetch and every check; returns the responses' headers (for round trips). */
export async function probe(t, steps) {
  const ctx = {};
  const out = [];
  for (const step of steps) {
    const res = await fetch(t.issuer + step.path, { method: step.method, headers: value(step.headers, ctx), body: value(step.body, ctx), redirect: "manual" });
    const text = await res.text();
    const headers = Object.fromEntries(res.headers);
    if (!statusOk(step, res.status)) throw new Error(`${t.name} ${step.name}: status ${res.status}, expected ${step.status}: ${text.slice(0, 300)}`);
    if (!step.ok(text, headers, ctx)) throw new Error(`${t.name} ${step.name}: unexpected answer: ${text.slice(0, 300)}`);
    if (step.probe) await step.probe(parse(text), ctx);
    out.push({ step: step.name, headers });
  }
  return out;
}

/** The same steps as autocannon requests; `tally` counts answers that fail their check. */
export function loadRequests(steps, tally) {
  return steps.map((step) => ({
    method: step.method,
    path: step.path,
    setupRequest: (req, ctx) => ({ ...req, headers: value(step.headers, ctx) ?? {}, ...(step.body ? { body: value(step.body, ctx) } : {}) }),
    onResponse: (status, body, ctx, headers) => {
      if (!statusOk(step, status) || !step.ok(body ?? "", headers, ctx)) {
        tally.failed++;
        if (tally.samples.length < 3) tally.samples.push(`${step.name}: ${status} ${String(body ?? "").slice(0, 200)}`);
      }
    },
  }));
}
