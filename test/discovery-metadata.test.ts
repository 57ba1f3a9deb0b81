import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertClient } from "@/lib/store/clients";
import { insertUser } from "@/lib/store/users";
import { startTestInstance, type TestInstance } from "./harness";
import { Browser, REDIRECT } from "./authorize-support";
import { delivered, makeRp, oidc, type Rp } from "./oidc-rp-support";

/**
 * The discovery document against OpenID Connect Discovery 1.0 section 3 and RFC 8414 section 2
 * (plus the endpoints of RFC 7009, RFC 7662 and RP-Initiated Logout): every field is one the
 * specifications define, of the type they define, the required and recommended ones are there,
 * and what it claims matches what the server does.
 */
let t: TestInstance;
let doc: Record<string, unknown>;
let rp: Rp;

type Kind = "issuer" | "url" | "strings" | "boolean";
/** Every metadata field Torii may publish, with its type. */
const FIELDS: Record<string, Kind> = {
  issuer: "issuer",
  authorization_endpoint: "url",
  token_endpoint: "url",
  userinfo_endpoint: "url",
  jwks_uri: "url",
  end_session_endpoint: "url",
  revocation_endpoint: "url",
  introspection_endpoint: "url",
  scopes_supported: "strings",
  response_types_supported: "strings",
  response_modes_supported: "strings",
  grant_types_supported: "strings",
  subject_types_supported: "strings",
  id_token_signing_alg_values_supported: "strings",
  token_endpoint_auth_methods_supported: "strings",
  token_endpoint_auth_signing_alg_values_supported: "strings",
  revocation_endpoint_auth_methods_supported: "strings",
  revocation_endpoint_auth_signing_alg_values_supported: "strings",
  introspection_endpoint_auth_methods_supported: "strings",
  introspection_endpoint_auth_signing_alg_values_supported: "strings",
  display_values_supported: "strings",
  claim_types_supported: "strings",
  acr_values_supported: "strings",
  claims_supported: "strings",
  ui_locales_supported: "strings",
  prompt_values_supported: "strings",
  code_challenge_methods_supported: "strings",
  claims_parameter_supported: "boolean",
  request_parameter_supported: "boolean",
  request_uri_parameter_supported: "boolean",
};
/** Discovery 1.0 3: REQUIRED (token_endpoint since Torii is not implicit-only); then RECOMMENDED ones Torii has. */
const REQUIRED = ["issuer", "authorization_endpoint", "token_endpoint", "jwks_uri", "response_types_supported", "subject_types_supported", "id_token_signing_alg_values_supported"];
const RECOMMENDED = ["userinfo_endpoint", "scopes_supported", "claims_supported"];

beforeAll(async () => {
  t = await startTestInstance();
  doc = (await (await fetch(`${t.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  rp = await makeRp(t);
});
afterAll(() => t.close());

describe("the discovery document, field by field", () => {
  it("has the required and recommended fields", () => {
    for (const f of [...REQUIRED, ...RECOMMENDED]) expect(doc, f).toHaveProperty(f);
  });

  it("has only fields the specifications define, each of its type", () => {
    for (const [k, v] of Object.entries(doc)) {
      const kind = FIELDS[k];
      expect(kind, `unknown field ${k}`).toBeDefined();
      if (kind === "boolean") expect(typeof v, k).toBe("boolean");
      if (kind === "strings") {
        expect(Array.isArray(v), k).toBe(true);
        const a = v as unknown[];
        expect(a.length, k).toBeGreaterThan(0);
        for (const s of a) expect(typeof s, k).toBe("string");
        expect(new Set(a).size, `${k} repeats a value`).toBe(a.length);
      }
      if (kind === "url" || kind === "issuer") {
        expect(typeof v, k).toBe("string");
        const u = new URL(v as string);
        expect(u.hash, k).toBe("");
        expect(u.search, k).toBe("");
        // The issuer is the URL the document was fetched under; every endpoint lies below it.
        if (kind === "issuer") expect(v).toBe(t.issuer);
        else expect((v as string).startsWith(t.issuer + "/"), k).toBe(true);
      }
    }
  });

  it("says what works: values the server accepts, algorithms without none, no request objects", () => {
    expect(doc.scopes_supported).toContain("openid");
    expect(doc.response_types_supported).toEqual(["code", "id_token", "id_token token"]);
    // RFC 8414 2: the id_token response types are the implicit grant.
    expect(doc.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "implicit", "refresh_token"]));
    expect(doc.subject_types_supported).toEqual(["public"]);
    expect(doc.id_token_signing_alg_values_supported).toEqual(["RS256"]);
    for (const prefix of ["token_endpoint", "revocation_endpoint", "introspection_endpoint"]) {
      const methods = doc[`${prefix}_auth_methods_supported`] as string[];
      // RFC 8414 2: the signing algorithms are required once a JWT method is listed.
      if (methods.includes("private_key_jwt")) expect(doc[`${prefix}_auth_signing_alg_values_supported`], prefix).toBeDefined();
    }
    for (const [k, v] of Object.entries(doc)) if (k.endsWith("_alg_values_supported")) expect(v, k).not.toContain("none");
    expect(doc.claims_parameter_supported).toBe(true);
    // request_uri_parameter_supported defaults to true (Discovery 3), so false must be said.
    expect(doc.request_parameter_supported).toBe(false);
    expect(doc.request_uri_parameter_supported).toBe(false);
    expect(doc).not.toHaveProperty("request_object_signing_alg_values_supported");
    expect(doc).not.toHaveProperty("registration_endpoint");
    expect(doc.claim_types_supported).toEqual(["normal"]);
  });

  it("is accepted by openid-client", () => {
    const meta = rp.config.serverMetadata();
    expect(meta.issuer).toBe(t.issuer);
    expect(meta.supportsPKCE()).toBe(true);
  });
});

describe("RFC 8414: the same metadata at /.well-known/oauth-authorization-server", () => {
  const RFC8414 = "/.well-known/oauth-authorization-server";

  it("answers the same document, with the same headers, as the OpenID discovery path", async () => {
    const res = await fetch(t.issuer + RFC8414);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const oauth = (await res.json()) as Record<string, unknown>;
    // RFC 8414 3.3: the issuer is the one the document was asked of.
    expect(oauth.issuer).toBe(t.issuer);
    expect(oauth).toEqual(doc);
    // RFC 8414 2: required, and required by what this server supports (authorization code grant).
    for (const f of ["issuer", "authorization_endpoint", "token_endpoint", "response_types_supported"]) expect(oauth, f).toHaveProperty(f);
    expect((await fetch(t.issuer + RFC8414, { method: "HEAD" })).status).toBe(200);
    expect((await fetch(t.issuer + RFC8414, { method: "POST" })).status).toBe(405);
  });

  it("is what openid-client reads when told the server is an OAuth 2.0 one, and a client-credentials token comes of it", async () => {
    const { client, secret } = await insertClient(t.inst.db, {
      name: "OAuth 2.0 client",
      redirectUris: [],
      responseTypes: [],
      grantTypes: ["client_credentials"],
      authMethod: "client_secret_basic",
      accessTokenLifetime: 600,
      idTokenLifetime: 600,
      refreshTokenLifetime: 600,
    });
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- tests talk to an http issuer
    const config = await oidc.discovery(new URL(t.issuer), client.id, undefined, oidc.ClientSecretBasic(secret!), { algorithm: "oauth2", execute: [oidc.allowInsecureRequests] });
    expect(config.serverMetadata().issuer).toBe(t.issuer);
    const tokens = await oidc.clientCredentialsGrant(config, {});
    expect(tokens.token_type).toBe("bearer");
    expect(tokens.access_token).toBeTruthy();
  });
});

describe("claims_supported lists exactly what ID tokens and userinfo return", () => {
  it("a user with every claim: the union of an ID token and userinfo is claims_supported (act comes from token exchange)", async () => {
    await insertUser(
      t.inst.db,
      {
        type: "human",
        username: "full",
        email: "full@mail.example",
        emailVerified: true,
        givenName: "Full",
        familyName: "Person",
        name: "Full Person",
        nickname: "Fully",
        locale: "de-CH",
        phone: "+41 44 000 00 00",
        phoneVerified: true,
        address: { streetAddress: "Bahnhofstrasse 1", locality: "Zürich", postalCode: "8001", region: "ZH", country: "CH" },
      },
      "correct horse battery",
    );
    const b = new Browser(t);
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const everything = Object.fromEntries((doc.claims_supported as string[]).map((c) => [c, null]));
    const url = oidc.buildAuthorizationUrl(rp.config, {
      redirect_uri: REDIRECT,
      scope: "openid profile email phone address roles",
      state: "s",
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      claims: JSON.stringify({ id_token: everything, userinfo: everything }),
    });
    const d = await delivered(await b.signIn(await b.authorizeRaw(url.search), "full", "correct horse battery"));
    const tokens = await oidc.authorizationCodeGrant(rp.config, d.toRp, { pkceCodeVerifier: verifier, expectedState: "s", expectedNonce: nonce });
    const idClaims = Object.keys(tokens.claims()!);
    const userinfo = Object.keys(await oidc.fetchUserInfo(rp.config, tokens.access_token, tokens.claims()!.sub));
    const returned = new Set([...idClaims, ...userinfo]);
    const supported = doc.claims_supported as string[];
    expect([...returned].filter((c) => !supported.includes(c))).toEqual([]);
    expect(supported.filter((c) => !returned.has(c))).toEqual(["act"]);
  });
});
