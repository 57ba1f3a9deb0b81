import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { tokenSealer } from "@/lib/keys/token-sealer";

const ISSUER = "https://id.example";

describe("token sealer", () => {
  const key = randomBytes(32);
  const sealer = tokenSealer(key, ISSUER);
  const payload = { j: "abc", c: "client-1", s: "openid email", a: ["client-1"], i: 1_700_000_000, e: 1_700_000_900, u: "user-7" };

  it("opens what it sealed, and nothing of the payload can be read from the token", () => {
    const token = sealer.seal(payload);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(sealer.open(token)).toEqual(payload);
    const bytes = Buffer.from(token, "base64url").toString("latin1");
    for (const clear of ["client-1", "user-7", "openid", "abc"]) expect(bytes).not.toContain(clear);
  });

  it("seals the same payload differently every time (a fresh IV per token)", () => {
    const tokens = new Set(Array.from({ length: 50 }, () => sealer.seal(payload)));
    expect(tokens.size).toBe(50);
  });

  it("opens what another process on the same master key sealed, under that process's own key", () => {
    const workers = Array.from({ length: 3 }, () => tokenSealer(key, ISSUER));
    const sealed = workers.map((w, i) => w.seal({ ...payload, j: `from-${i}` }));
    // Each process seals under a key of its own: the key salts differ.
    expect(new Set(sealed.map((t) => Buffer.from(t, "base64url").subarray(1, 17).toString("hex"))).size).toBe(3);
    for (const w of [...workers, sealer]) expect(sealed.map((t) => w.open(t)?.j)).toEqual(["from-0", "from-1", "from-2"]);
  });

  it("refuses another master key, another issuer, and another purpose on the same key", () => {
    const token = sealer.seal(payload);
    expect(tokenSealer(randomBytes(32), ISSUER).open(token)).toBeUndefined();
    expect(tokenSealer(key, "https://other.example").open(token)).toBeUndefined();
    expect(tokenSealer(key, ISSUER, "something-else").open(token)).toBeUndefined();
  });

  it("refuses every altered byte, a truncated token, another spelling of the same bytes and garbage", () => {
    const token = sealer.seal(payload);
    const bytes = Buffer.from(token, "base64url");
    for (let i = 0; i < bytes.length; i++) {
      const altered = Buffer.from(bytes);
      altered[i] = altered[i]! ^ 0x01;
      expect(sealer.open(altered.toString("base64url"))).toBeUndefined();
    }
    expect(sealer.open(token.slice(0, -1))).toBeUndefined();
    expect(sealer.open(bytes.subarray(0, bytes.length - 1).toString("base64url"))).toBeUndefined();
    // A length that is not a multiple of 3 leaves unused bits in the last character, and base64url
    // decoding ignores them: a token spelled with other unused bits is the same bytes, and refused.
    const longer = [0, 1, 2].map((n) => ({ ...payload, j: "abc" + "x".repeat(n) }));
    const odd = longer.map((p) => sealer.seal(p)).find((t) => Buffer.from(t, "base64url").length % 3 !== 0)!;
    const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const sibling = odd.slice(0, -1) + ALPHABET.charAt(ALPHABET.indexOf(odd.at(-1)!) ^ 1);
    expect(Buffer.from(sibling, "base64url").equals(Buffer.from(odd, "base64url"))).toBe(true);
    expect(sealer.open(odd)).toBeDefined();
    expect(sealer.open(sibling)).toBeUndefined();
    for (const junk of ["", "a", "a.b.c", "!!!!", "x".repeat(5000), randomBytes(64).toString("base64url"), token + "="]) {
      expect(sealer.open(junk)).toBeUndefined();
    }
  });
});
