import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { json, knownBody, textResponse } from "@/lib/http/responses";
import { sendWebResponse } from "@/lib/server/node-adapter";

// server.ts writes a known text body as it is; everything else (Next, tests) reads the Response
// the Web way, and must get the same body, status and headers as from a plain Response.
describe("responses with a known text body", () => {
  it("are read the Web way like a plain Response: text, json, stream, clone", async () => {
    const r = json({ a: 1, b: "ü" }, 201, { "X-Extra": "1" });
    expect(r).toBeInstanceOf(Response);
    expect(r.status).toBe(201);
    expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(r.headers.get("x-extra")).toBe("1");
    expect(knownBody(r)).toBe('{"a":1,"b":"ü"}');
    expect(r.bodyUsed).toBe(false);
    const copy = r.clone();
    expect(await r.json()).toEqual({ a: 1, b: "ü" });
    expect(r.bodyUsed).toBe(true);
    await expect(r.text()).rejects.toThrow();
    expect(await copy.text()).toBe('{"a":1,"b":"ü"}');

    const streamed = textResponse("hello", { status: 200 });
    const reader = streamed.body!.getReader();
    const chunks: Uint8Array[] = [];
    for (let c = await reader.read(); !c.done; c = await reader.read()) chunks.push(c.value);
    expect(Buffer.concat(chunks).toString()).toBe("hello");
    // As `new Response(text)` does when no type is given.
    expect(streamed.headers.get("content-type")).toBe("text/plain;charset=UTF-8");
    expect(new Uint8Array(await textResponse("é", { status: 200 }).arrayBuffer())).toEqual(new Uint8Array(Buffer.from("é")));
  });

  it("a body as Next rebuilds it (new Response(body, init)) keeps the text", async () => {
    const r = textResponse("<p>page</p>", { status: 400, headers: { "Content-Type": "text/html" } });
    const rebuilt = new Response(r.body, { status: r.status, headers: r.headers });
    expect(await rebuilt.text()).toBe("<p>page</p>");
    expect(rebuilt.headers.get("content-type")).toBe("text/html");
  });

  it("no body for HEAD (null text), and a plain Response has no known text", async () => {
    const head = textResponse(null, { status: 200 });
    expect(head.body).toBeNull();
    expect(knownBody(head)).toBeUndefined();
    expect(knownBody(new Response("x"))).toBeUndefined();
    expect(await head.text()).toBe("");
  });

  it("reach the client whole through server.ts, with a Content-Length in bytes, not characters", async () => {
    const text = JSON.stringify({ error_description: "Grüße aus 東京 🔑" });
    const server = http.createServer((_req, res) => void sendWebResponse(res, json(JSON.parse(text), 400), { "x-frame-options": "DENY" }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      expect(res.status).toBe(400);
      expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(await res.text()).toBe(text);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
