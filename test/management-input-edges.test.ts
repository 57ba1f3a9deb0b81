import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateRegistration } from "@/lib/login/register";
import { showable } from "@/lib/text/shown-text";
import { startTestInstance, type TestInstance } from "./harness";

/**
 * Input a hostile probe found accepted by the management API: names that hide or reorder what
 * a page shows around them, members named __proto__ that vanished without a word, a language
 * tag of 902 characters. Each is refused with the field it concerns, and nothing is stored.
 */
let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const raw = (method: string, path: string, body: string) =>
  t.api("/management/v1" + path, { method, body, headers: { "content-type": "application/json" } });
const send = (method: string, path: string, json: unknown) => t.api("/management/v1" + path, { method, json });

async function refusedAt(res: Response): Promise<{ path: string; code: string }[]> {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { error: string; fields: { path: string; code: string }[] };
  expect(body.error).toBe("invalid_request");
  return body.fields.map(({ path, code }) => ({ path, code }));
}

describe("names that pages show", () => {
  const rlo = "Bank\u202e lanoitan";
  const bad = [rlo, "ring\u0007bell", "esc\u001b[31m", "iso\u2066late\u2069", "c1\u0085"];

  it("a client's, a user's, an API's and the product's name refuse control and text-direction characters", async () => {
    for (const name of bad) {
      expect(await refusedAt(await send("POST", "/clients", { name, redirectUris: ["https://app.example/cb"] })), name).toEqual([{ path: "name", code: "text_characters" }]);
      expect(await refusedAt(await send("POST", "/users", { username: `u${Date.now()}`, givenName: name })), name).toEqual([{ path: "givenName", code: "text_characters" }]);
      expect(await refusedAt(await send("POST", "/apis", { identifier: "https://api.example/x", name, scopes: [] })), name).toEqual([{ path: "name", code: "text_characters" }]);
    }
    const branding = await (await send("GET", "/branding", undefined)).json();
    const res = await send("PUT", "/branding", { ...branding, productName: rlo });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain("text_characters");
    expect((await (await send("GET", "/branding", undefined)).json()).productName).toBe(branding.productName);
    expect(((await (await send("GET", "/clients", undefined)).json()) as { clients: { name: string }[] }).clients.some((c) => bad.includes(c.name))).toBe(false);
  });

  it("right-to-left text and its marks are names like any other", async () => {
    const res = await send("POST", "/clients", { name: "\u05d0\u05e4\u05dc\u05d9\u05e7\u05e6\u05d9\u05d4 \u200fv2", redirectUris: ["https://rtl.example/cb"] });
    expect(res.status).toBe(201);
  });

  it("registration names the field, and a factor's name loses what cannot be shown", () => {
    const policy = { minLength: 10, requireUppercase: false, requireLowercase: false, requireNumber: false, requireSymbol: false };
    const input = { username: "grace", email: "grace@example.com", givenName: rlo, familyName: "Hopper", password: "long enough pw", passwordConfirmation: "long enough pw" };
    expect(validateRegistration(input, policy).map((e) => `${e.field}:${e.key}`)).toEqual(["givenName:nameCharacters"]);
    expect(validateRegistration({ ...input, givenName: "x".repeat(201) }, policy).map((e) => `${e.field}:${e.key}`)).toEqual(["givenName:tooLong"]);
    expect(showable("Phone\u202e enohP\u0000")).toBe("Phone enohP");
  });
});

describe("members named __proto__", () => {
  it("are unknown fields, not silently dropped", async () => {
    const user = (await (await send("POST", "/users", { username: `proto${Date.now()}` })).json()) as { id: string };
    expect(await refusedAt(await raw("POST", "/clients", '{"name":"P","redirectUris":["https://p.example/cb"],"apiScopes":{"__proto__":["read"]}}'))).toEqual([
      { path: "apiScopes.__proto__", code: "unknown_field" },
    ]);
    expect(await refusedAt(await raw("PUT", `/users/${user.id}/roles`, '{"__proto__":["viewer"]}'))).toEqual([{ path: "__proto__", code: "unknown_field" }]);
    expect(await refusedAt(await raw("PUT", "/texts/en", '{"texts":{"__proto__":"x"}}'))).toEqual([{ path: "texts.__proto__", code: "unknown_field" }]);
    expect(await refusedAt(await raw("PATCH", `/users/${user.id}`, '{"__proto__":{"locked":true}}'))).toEqual([{ path: "__proto__", code: "unknown_field" }]);
  });
});

describe("a user's language", () => {
  it("is a language tag of at most 35 characters (RFC 5646 4.4.1)", async () => {
    const user = (await (await send("POST", "/users", { username: `lang${Date.now()}` })).json()) as { id: string };
    expect(await refusedAt(await send("PATCH", `/users/${user.id}`, { locale: "en" + "-abcdefgh".repeat(100) }))).toEqual([{ path: "locale", code: "too_long" }]);
    expect((await send("PATCH", `/users/${user.id}`, { locale: "de-CH" })).status).toBe(200);
  });
});
