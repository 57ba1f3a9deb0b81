import { createHash, createHmac, randomBytes } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { constantTimeEqual, matchesSha256, sha256, sha256Digest } from "@/lib/crypto";
import { successorValue } from "@/lib/oauth/grants/refresh-successor";

const reference = (v: string | Buffer) => createHash("sha256").update(v).digest();
const VALUES = ["", "client-secret-0123456789", "Grüße aus 東京 🔑", "a".repeat(5000)];

describe("SHA-256 of secrets and tokens", () => {
  afterEach(() => {
    vi.doUnmock("node:crypto");
    vi.resetModules();
  });

  it("is the SHA-256 of the value's UTF-8 (a string) or bytes, as createHash gives it", () => {
    for (const v of VALUES) {
      expect(sha256Digest(v).equals(reference(v))).toBe(true);
      expect(sha256Digest(Buffer.from(v)).equals(reference(v))).toBe(true);
      expect(sha256(v)).toBe(reference(v).toString("base64url"));
      expect(matchesSha256(v, sha256(v))).toBe(true);
      expect(matchesSha256(v + "x", sha256(v))).toBe(false);
      expect(constantTimeEqual(v, v)).toBe(true);
      expect(constantTimeEqual(v, v + "x")).toBe(false);
    }
    expect(matchesSha256("secret", "not-a-digest")).toBe(false);
    // RFC 7636 appendix B: the S256 challenge of its example verifier (the PKCE check hashes so).
    expect(sha256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
  });

  it("is the same where Node has no one-shot crypto.hash (Node 20.9 to 20.11)", async () => {
    const built = vi.fn();
    vi.doMock("node:crypto", async (importOriginal) => {
      const real = await importOriginal<typeof import("node:crypto")>();
      const createHashCounted = (...args: Parameters<typeof real.createHash>) => {
        built();
        return real.createHash(...args);
      };
      return { ...real, default: { ...real, hash: undefined, createHash: createHashCounted }, hash: undefined, createHash: createHashCounted };
    });
    vi.resetModules();
    const fallback = await import("@/lib/crypto");
    for (const v of VALUES) {
      expect(fallback.sha256Digest(v).equals(reference(v))).toBe(true);
      expect(fallback.sha256(v)).toBe(sha256(v));
    }
    expect(built).toHaveBeenCalled();
  });
});

describe("a refresh token's successor", () => {
  it("is HMAC-SHA256 of the presented token under the key derived from the master key, the same at every call", () => {
    const masterKey = randomBytes(32);
    const key = createHmac("sha256", masterKey).update("torii/refresh-token-successor/v1").digest();
    const expected = createHmac("sha256", key).update("presented-token").digest("base64url");
    expect(successorValue(masterKey, "presented-token")).toBe(expected);
    expect(successorValue(masterKey, "presented-token")).toBe(expected);
    expect(successorValue(masterKey, "another-token")).not.toBe(expected);
    expect(successorValue(randomBytes(32), "presented-token")).not.toBe(expected);
  });
});
