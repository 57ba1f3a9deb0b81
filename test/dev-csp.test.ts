// `npm run dev`: React's development build needs eval (it rebuilds server stack traces), so the
// page policy next.config.ts sends under `next dev` allows it; production never does (there the
// server entry sends a per-request nonce policy, checked by e2e/csp.spec.ts).
import { afterEach, describe, expect, it, vi } from "vitest";
import { pageCsp } from "@/lib/http/security-headers";

type Rule = { source: string; headers: { key: string; value: string }[] };

async function pagePolicy(nodeEnv: string): Promise<string | undefined> {
  vi.stubEnv("NODE_ENV", nodeEnv);
  vi.resetModules();
  const config = (await import("@/next.config")).default;
  const rules = (await config.headers!()) as Rule[];
  const rule = rules.find((r) => r.source.startsWith("/:path(") && r.headers.some((h) => h.key === "Content-Security-Policy"));
  return rule?.headers.find((h) => h.key === "Content-Security-Policy")?.value;
}

const scriptSrc = (csp: string) => csp.split(";").map((d) => d.trim()).find((d) => d.startsWith("script-src"))!;

afterEach(() => vi.unstubAllEnvs());

describe("page CSP", () => {
  it("under next dev allows what React's development runtime needs: eval", async () => {
    const csp = await pagePolicy("development");
    expect(csp).toBeDefined();
    expect(scriptSrc(csp!)).toContain("'unsafe-eval'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("connect-src 'self'"); // the development server's websocket is same-origin
  });

  it("in production comes from the server entry (per-request nonce), never with eval or inline scripts", async () => {
    expect(await pagePolicy("production")).toBeUndefined();
    const csp = pageCsp("bm9uY2U=");
    expect(scriptSrc(csp)).toBe("script-src 'self' 'nonce-bm9uY2U='");
  });
});
