import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { appendHeader, json, knownBody, knownHeaderFields, setHeader, textResponse } from "@/lib/http/responses";
import { sendWebResponse } from "@/lib/server/node-adapter";

// server.ts writes a known text body as it is; everything else (Next, tests) reads the Response
// the Web way, and must get the same body, status and headers as from a plain Response.
describe("responses with a known text body", () => {
  // A response as server.ts writes it (with two server defaults), read back by a client: a text
  // response's fields come from the record its handler gave, without making a Headers.
  async function served(make: () => Response): Promise<{ status: number; headers: Headers; text: string }> {
    const server = http.createServer((_req, res) => void sendWebResponse(res, make(), { "x-frame-options": "DENY", "cache-control": "private" }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { redirect: "manual" });
      return { status: res.status, headers: res.headers, text: await res.text() };
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }
  const own = (h: Headers) => [...h].filter(([k]) => !["date", "connection", "keep-alive", "content-length", "x-frame-options"].includes(k));

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
    const got = await served(() => json(JSON.parse(text), 400));
    expect(got.status).toBe(400);
    expect(got.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
    expect(got.headers.get("x-frame-options")).toBe("DENY");
    expect(got.text).toBe(text);
  });

  it("a plain Response is written too: a body read first (bytes, exact length), or none", async () => {
    // sendWebResponse returns a promise only for these; a text answer is written at once.
    const bytes = await served(() => new Response(new Uint8Array([0, 1, 255]), { status: 200, headers: { "Content-Type": "image/png" } }));
    expect(bytes.status).toBe(200);
    expect(bytes.headers.get("content-type")).toBe("image/png");
    expect(bytes.headers.get("content-length")).toBe("3");
    const none = await served(() => new Response(null, { status: 204, headers: { "X-A": "1" } }));
    expect(none.status).toBe(204);
    expect(none.headers.get("x-a")).toBe("1");
    expect(none.text).toBe("");
  });

  it("write the same header fields a plain Response holds: names in any case, a name twice, spaces around a value, no type", async () => {
    const inits: ResponseInit[] = [
      { status: 201, headers: { "Content-Type": "application/json", "X-Trace": "  a b\t" } },
      { status: 200, headers: { "X-Twice": "1", "x-twice": "2", "Cache-Control": "no-store" } },
      { status: 404 },
      { status: 200, headers: new Headers({ "X-From-Headers": "yes" }) },
      { status: 200, headers: [["X-Pair", "p"]] },
      { status: 302, headers: { Location: "/next", "Set-Cookie": "a=1; Path=/" } },
    ];
    for (const init of inits) {
      const expected = new Response("body", init);
      const got = await served(() => textResponse("body", init));
      expect(got.status).toBe(expected.status);
      expect(got.text).toBe("body");
      // The handler's own Cache-Control replaces the server default, as before.
      const want = new Headers(expected.headers);
      if (!want.has("cache-control")) want.set("cache-control", "private");
      expect(own(got.headers).sort()).toEqual(own(want).sort());
      expect(got.headers.get("x-frame-options")).toBe("DENY");
    }
  });

  it("headers read or changed after construction are the ones written", async () => {
    // Until then server.ts writes the record; after, the Headers a caller may have changed.
    const r = json({}, 200, { "X-A": " 1 " });
    expect(knownHeaderFields(r)).toEqual({ "content-type": "application/json; charset=utf-8", "x-a": "1" });
    expect(r.headers.get("x-a")).toBe("1");
    expect(knownHeaderFields(r)).toBeUndefined();
    const got = await served(() => {
      const r = json({ ok: true }, 200, { "X-Before": "1" });
      r.headers.set("X-After", "2");
      r.headers.delete("x-before");
      r.headers.append("Set-Cookie", "s=1; Path=/");
      r.headers.append("Set-Cookie", "t=2; Path=/");
      return r;
    });
    expect(got.headers.get("x-after")).toBe("2");
    expect(got.headers.has("x-before")).toBe(false);
    expect(got.headers.getSetCookie()).toEqual(["s=1; Path=/", "t=2; Path=/"]);
    expect(got.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(JSON.parse(got.text)).toEqual({ ok: true });
  });

  it("fields added with appendHeader and setHeader are those headers.append and headers.set give, still without a Headers", async () => {
    // What corsEndpoint adds to every back-channel answer.
    const change = (r: Response, add: typeof appendHeader, set: typeof setHeader) => {
      add(r, "Vary", "Origin");
      add(r, "vary", " Accept ");
      add(r, "X-New", "1");
      set(r, "Cache-Control", "no-cache");
      set(r, "access-control-allow-origin", "https://spa.example");
      return r;
    };
    const init = { status: 200, headers: { "Content-Type": "application/json", "Cache-Control": "no-store", Vary: "Accept-Language" } };
    const viaHeaders = change(new Response("body", init), (r, n, v) => { r.headers.append(n, v); }, (r, n, v) => { r.headers.set(n, v); });
    const record = change(textResponse("body", init), appendHeader, setHeader);
    expect(knownHeaderFields(record)).toEqual(Object.fromEntries(viaHeaders.headers));
    const got = await served(() => change(textResponse("body", init), appendHeader, setHeader));
    expect(own(got.headers).sort()).toEqual(own(viaHeaders.headers).sort());
    expect(got.headers.get("vary")).toBe("Accept-Language, Origin, Accept");

    // Once something has read headers, they go there, and that is what is written.
    const got2 = await served(() => {
      const r = json({}, 200);
      r.headers.set("X-Read", "1");
      appendHeader(r, "Vary", "Origin");
      setHeader(r, "X-Read", "2");
      appendHeader(r, "Set-Cookie", "a=1; Path=/");
      return r;
    });
    expect(got2.headers.get("vary")).toBe("Origin");
    expect(got2.headers.get("x-read")).toBe("2");
    expect(got2.headers.getSetCookie()).toEqual(["a=1; Path=/"]);
    // Set-Cookie always goes to Headers (a list), never into the record.
    const cookie = json({}, 200);
    appendHeader(cookie, "Set-Cookie", "b=2; Path=/");
    expect(knownHeaderFields(cookie)).toBeUndefined();
    expect(cookie.headers.getSetCookie()).toEqual(["b=2; Path=/"]);
    // A plain Response is changed through its headers.
    const plain = new Response("x");
    appendHeader(plain, "Vary", "Origin");
    setHeader(plain, "X-A", "1");
    expect(plain.headers.get("vary")).toBe("Origin");
    expect(plain.headers.get("x-a")).toBe("1");
  });

  it("a field appendHeader or setHeader is given is refused as Headers refuses it, and the record keeps its fields", () => {
    for (const [name, value] of [["X-Bad", "a\r\nInjected: 1"], ["X-Nul", "a\0b"], ["X-Wide", "東京"], ["Bad Name", "1"], ["", "1"]]) {
      expect(() => { new Response("x").headers.append(name!, value!); }).toThrow(TypeError);
      const r = json({}, 200, { "X-Kept": "1" });
      expect(() => { appendHeader(r, name!, value!); }).toThrow(TypeError);
      expect(() => { setHeader(r, name!, value!); }).toThrow(TypeError);
      expect(knownHeaderFields(r)).toEqual({ "content-type": "application/json; charset=utf-8", "x-kept": "1" });
    }
  });

  it("a header a plain Response refuses is refused at construction the same way", () => {
    for (const headers of [{ "X-Bad": "a\r\nInjected: 1" }, { "X-Nul": "a\0b" }, { "X-Wide": "東京" }, { "Bad Name": "1" }, { "": "1" }] as Record<string, string>[]) {
      expect(() => new Response("x", { headers })).toThrow(TypeError);
      expect(() => textResponse("x", { status: 200, headers })).toThrow(TypeError);
      expect(() => json({}, 200, headers)).toThrow(TypeError);
    }
  });
});
