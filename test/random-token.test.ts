import { describe, expect, it } from "vitest";
import { randomId, randomToken } from "@/lib/crypto";

// Tokens come from a pool of CSPRNG bytes: every call must get bytes no other call got, across
// refills of the pool, and of the length asked for.
describe("random tokens", () => {
  it("are distinct across many refills of the pool, and of the length asked for", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const t = randomToken(i % 3 === 0 ? 16 : 32);
      expect(t).toMatch(i % 3 === 0 ? /^[A-Za-z0-9_-]{22}$/ : /^[A-Za-z0-9_-]{43}$/);
      seen.add(t);
    }
    expect(seen.size).toBe(5000);
    // Larger than the pool: still fresh bytes, the whole length.
    expect(Buffer.from(randomToken(10_000), "base64url")).toHaveLength(10_000);
  });

  it("no two overlapping: consecutive tokens share no run of bytes", () => {
    const a = Buffer.from(randomToken(32), "base64url");
    const b = Buffer.from(randomToken(32), "base64url");
    expect(b.includes(a.subarray(0, 8))).toBe(false);
  });

  it("ids are 18 digits and distinct, drawn from the same pool as tokens", () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const id = randomId();
      expect(id).toMatch(/^\d{18}$/);
      ids.add(id);
      randomToken(i % 7);
    }
    expect(ids.size).toBe(3000);
  });
});
