// GET /favicon.ico: browsers ask for it on every site; it is the instance logo, or a default icon
// in the brand's colour, never a 404.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestInstance, type TestInstance } from "./harness";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");
const branding = (json: unknown) => t.api("/management/v1/branding", { method: "PUT", json });

describe("/favicon.ico", () => {
  it("without a logo: a default SVG icon in the brand's primary colour, cacheable, under a script-free policy", async () => {
    const res = await fetch(t.baseUrl + "/favicon.ico");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/svg+xml");
    expect(res.headers.get("cache-control")).toMatch(/max-age=\d+/);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    const svg = await res.text();
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain('fill="#c2410c"');

    expect((await branding({ primaryColor: "#fde047" })).status).toBe(200);
    const light = await (await fetch(t.baseUrl + "/favicon.ico")).text();
    expect(light).toContain('fill="#fde047"');
    expect(light).toContain('fill="#1c1917"'); // the brand's contrast colour draws the gate
    await branding({ primaryColor: "#c2410c" });
  });

  it("with a logo: the logo, revalidated by ETag; HEAD has no body; other methods are refused", async () => {
    expect((await branding({ logo: `data:image/png;base64,${PNG.toString("base64")}` })).status).toBe(200);
    const res = await fetch(t.baseUrl + "/favicon.ico");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(Buffer.compare(Buffer.from(await res.arrayBuffer()), PNG)).toBe(0);
    const again = await fetch(t.baseUrl + "/favicon.ico", { headers: { "if-none-match": res.headers.get("etag")! } });
    expect(again.status).toBe(304);
    const head = await fetch(t.baseUrl + "/favicon.ico", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const post = await fetch(t.baseUrl + "/favicon.ico", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");

    await branding({ logo: null });
    expect((await fetch(t.baseUrl + "/favicon.ico")).headers.get("content-type")).toBe("image/svg+xml");
  });
});
