import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestInstance, type TestInstance } from "./harness";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

describe("discovery", () => {
  it("serves the document derived from the issuer", async () => {
    const res = await fetch(t.baseUrl + "/.well-known/openid-configuration");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    const doc = await res.json();
    expect(doc.issuer).toBe(t.issuer);
    expect(doc.jwks_uri).toBe(`${t.issuer}/oauth/v2/keys`);
    expect(doc.id_token_signing_alg_values_supported).toEqual(["RS256"]);
    // `none` is a client authentication method (public clients) but never an algorithm.
    for (const [k, v] of Object.entries(doc)) if (k.endsWith("_alg_values_supported")) expect(v).not.toContain("none");
  });
});

describe("discovery follows the features", () => {
  const TE = "urn:ietf:params:oauth:grant-type:token-exchange";
  const grants = async () =>
    ((await (await fetch(t.baseUrl + "/.well-known/openid-configuration")).json()) as { grant_types_supported: string[] })
      .grant_types_supported;

  it("advertises token exchange only while the feature is enabled", async () => {
    expect(await grants()).not.toContain(TE);
    expect(await grants()).toContain("authorization_code");
    const put = await t.api("/management/v1/features", { method: "PUT", json: { tokenExchange: true } });
    expect(put.status).toBe(200);
    expect(await grants()).toContain(TE);
    await t.api("/management/v1/features", { method: "PUT", json: { tokenExchange: false } });
    expect(await grants()).not.toContain(TE);
  });
});
