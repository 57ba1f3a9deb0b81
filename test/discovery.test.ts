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
