import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addressForLimits, connectionClientAddress, resolveClientAddress, trustedProxyList } from "@/lib/http/client-address";
import { startTestInstance, type TestInstance } from "./harness";
import { NEXT_ROUTES } from "./next-routes";
import { rawRequest } from "./raw-http";
import { readBody, RequestAborted } from "@/lib/server/node-adapter";
import { createToriiServer, toriiRequestListener } from "@/lib/server/create-server";

/**
 * Issue 16, the edge of the server: bounded bodies on every route (defect 1), timeouts and a
 * connection cap, request lines no handler can serve (defect 6), absolute-form targets
 * (defect 11) and the client address behind trusted proxies (defect 3).
 */
let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance({}, { nextRoutes: true, limits: { headersTimeoutMs: 1000, requestTimeoutMs: 1500, maxConnections: 20 } });
});
afterAll(() => t.close());

const host = () => new URL(t.baseUrl).host;
const MiB = 1024 * 1024;
const BODY_ROUTES = ["/oauth/v2/authorize", "/oidc/v1/end_session", "/ui/logout/confirm", "/ui/login/submit/loginname", "/ui/login/submit/password", "/ui/login/submit/account", "/ui/login/submit/register", "/ui/console/signout", "/oauth/v2/token", "/oauth/v2/introspect", "/oauth/v2/revoke", "/oidc/v1/userinfo", "/management/v1/users"];

/** A body streamed in chunks without a Content-Length, as a client can send any size. */
function streamed(bytes: number): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(64 * 1024).fill(0x61);
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent >= bytes) { c.close(); return; }
      sent += chunk.length;
      c.enqueue(chunk);
    },
  });
}

describe("bounded bodies (defect 1)", () => {
  it.each(BODY_ROUTES)("%s: a declared body over the limit is refused with 413 before it is read", async (path) => {
    const r = await rawRequest(
      t.baseUrl,
      `POST ${path} HTTP/1.1\r\nHost: ${host()}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 999999999\r\n\r\nabc`,
    );
    expect(r.status).toBe(413);
    // The management API answers in its own error shape.
    if (path.startsWith("/management/")) expect(r.body).toMatch(/\{"error":"invalid_request","message":"[^"]+"\}/);
    // The lying Content-Length does not hold the connection: answered at once, closed after a
    // short linger (lib/server/create-server.ts, closeAfterAnswer).
    expect(r.closed).toBe(true);
    expect(r.ms).toBeLessThan(3000);
  });

  it.each(BODY_ROUTES)("%s: a streamed body over the limit (no Content-Length) is refused with 413", async (path) => {
    const res = await fetch(t.baseUrl + path, {
      method: "POST",
      headers: { "content-type": path.startsWith("/management") ? "application/json" : "application/x-www-form-urlencoded", authorization: `Bearer ${t.adminPat}` },
      body: streamed(3 * MiB),
      // @ts-expect-error Node's fetch needs this for a streamed body.
      duplex: "half",
    }).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
    // The server may close while the client is still sending; then the client sees the reset.
    if (res instanceof Error) { expect(res.cause instanceof Error ? res.cause.message : res.message).toMatch(/EPIPE|ECONNRESET|closed|terminated|other side/i); return; }
    expect(res.status).toBe(413);
  });

  it("a body under the limit still works on the Next-served routes (end_session POST)", async () => {
    const res = await fetch(t.baseUrl + "/oidc/v1/end_session", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "state=x&pad=" + "a".repeat(10_000),
      redirect: "manual",
    });
    expect(res.status).toBe(303);
  });

  it("the route table of the Next stand-in covers every POST route Next serves", () => {
    for (const p of BODY_ROUTES.slice(0, 8)) expect(NEXT_ROUTES[p]).toBeDefined();
  });

  it("a half-sent body is cut off by the request timeout, not kept open", async () => {
    const r = await rawRequest(
      t.baseUrl,
      `POST /oauth/v2/token HTTP/1.1\r\nHost: ${host()}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nabc`,
      { waitMs: 6000 },
    );
    expect(r.closed).toBe(true);
    expect(r.ms).toBeLessThan(4500);
    expect([0, 408]).toContain(r.status);
  });

  it("headers that never finish are cut off by the header timeout", async () => {
    const r = await rawRequest(t.baseUrl, `GET /healthz HTTP/1.1\r\nHost: ${host()}\r\nX-Slow: 1\r\n`, { waitMs: 6000 });
    expect(r.closed).toBe(true);
    expect(r.ms).toBeLessThan(4500);
  });

  it("connections over the cap are closed at once", async () => {
    const { hostname, port } = new URL(t.baseUrl);
    const open: net.Socket[] = [];
    try {
      for (let i = 0; i < 20; i++) {
        const s = net.connect(Number(port), hostname);
        await new Promise((r) => s.once("connect", r));
        open.push(s);
      }
      await new Promise((r) => setTimeout(r, 100));
      const r = await rawRequest(t.baseUrl, `GET /healthz HTTP/1.1\r\nHost: ${host()}\r\n\r\n`, { waitMs: 2000 });
      expect(r.status).toBe(0);
      expect(r.closed).toBe(true);
    } finally {
      for (const s of open) s.destroy();
    }
    await new Promise((r) => setTimeout(r, 100));
    expect((await fetch(t.baseUrl + "/healthz")).status).toBe(200);
  });
});

describe("refusals and aborted bodies (found by a probe)", () => {
  it("a refused request whose small body lands just after the answer keeps its keep-alive connection", async () => {
    const { hostname, port } = new URL(t.baseUrl);
    const s = net.connect(Number(port), hostname);
    let got = "";
    s.on("data", (d) => (got += d.toString("latin1")));
    await new Promise((r) => s.once("connect", r));
    // Refused by its request line, before anything reads the body, which arrives a moment later.
    s.write(`POST /oauth/v2/%zz HTTP/1.1\r\nHost: ${host()}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 5\r\n\r\n`);
    await new Promise((r) => setTimeout(r, 150));
    s.write("a=b&c");
    // Past the lingering close's second, the connection still serves the next request.
    await new Promise((r) => setTimeout(r, 1500));
    s.write(`GET /healthz HTTP/1.1\r\nHost: ${host()}\r\nConnection: close\r\n\r\n`);
    await new Promise((r) => s.once("close", r));
    const statuses = [...got.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
    expect(statuses).toEqual([400, 200]);
    expect(got).toMatch(/"ok"/);
  });

  it("a client that goes away mid-body is an aborted request, not a failure", async () => {
    let settle: (err: unknown) => void = () => {};
    const outcome = new Promise<unknown>((r) => (settle = r));
    const server = http.createServer((req, res) => {
      readBody(req).then(() => res.end("read"), settle);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const s = net.connect((server.address() as net.AddressInfo).port, "127.0.0.1");
      await new Promise((r) => s.once("connect", r));
      s.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\ngrant_type=cl");
      await new Promise((r) => setTimeout(r, 100));
      s.destroy();
      expect(await outcome).toBeInstanceOf(RequestAborted);
    } finally {
      server.close();
    }
  });
});

describe("server action bodies Next would decode (found by probes)", () => {
  // A stand-in for Next that reads the body as Next does (from the request stream) and echoes
  // the form it finds there.
  let server: http.Server;
  let base = "";
  const seen: [string, string][][] = [];
  beforeAll(async () => {
    const echo = (req: http.IncomingMessage, res: http.ServerResponse) => {
      readBody(req)
        .then((b) => new Response(new Uint8Array(b), { headers: { "content-type": req.headers["content-type"] ?? "" } }).formData())
        .then((form) => {
          const entries = [...form].map(([k, v]): [string, string] => [k, typeof v === "string" ? v : `file:${v.name}:${v.size}`]);
          seen.push(entries);
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(entries));
        }, () => { res.writeHead(500).end(); });
    };
    server = http.createServer(toriiRequestListener(t.inst, echo));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => { r(); })));

  type Part = [string, string] | [string, string, string];
  /** Parts as a browser writes them; a third element makes the part a file of that name. */
  const multipart = (parts: Part[], boundary = "b0undary", partHeaders = "") =>
    parts
      .map(([name, value, file]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${file !== undefined ? `; filename="${file}"\r\nContent-Type: application/octet-stream` : ""}${partHeaders}\r\n\r\n${value}\r\n`)
      .join("") + `--${boundary}--\r\n`;
  const post = (body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}, contentType = "multipart/form-data; boundary=b0undary") =>
    fetch(base + "/ui/console/features", {
      method: "POST",
      headers: { "content-type": contentType, ...headers },
      body,
      // @ts-expect-error Node's fetch needs this for a streamed body.
      duplex: "half",
    });
  // A fetch action (what a page's script sends): the form's previous state and the form.
  const action = { "next-action": "7f00" };
  const state = '{"seq":1,"ok":false,"message":"Saved.","values":{"name":"$$ sign","enabled":["false","true"]},"fields":{"a":"b"},"secret":"$undefined"}';
  const fetchForm: Part[] = [["_1_$ACTION_REF_2", ""], ["_1_$ACTION_2:0", '{"id":"7f00","bound":"$@1"}'], ["_1_csrf", "t"], ["_1_logo", "PNG", "logo.png"], ["0", `[${state},"$K1"]`]];
  const postedForm: Part[] = [["$ACTION_REF_3", ""], ["$ACTION_3:0", '{"id":"7f00","bound":"$@1"}'], ["$ACTION_3:1", `[${state}]`], ["$ACTION_KEY", "k0"], ["csrf", "t"], ["$weird name", "{not json"]];

  it("a page answers GET, HEAD and POST; OPTIONS lists them and PUT, PATCH and DELETE are 405 before Next (found by a probe: Next rendered the page)", async () => {
    const before = seen.length;
    for (const method of ["PUT", "PATCH", "DELETE"]) {
      const r = await fetch(base + "/ui/login", { method, body: "x" });
      expect(r.status, method).toBe(405);
      expect(r.headers.get("allow"), method).toBe("GET, HEAD, POST, OPTIONS");
      expect((await r.json()).error, method).toBe("invalid_request");
    }
    const options = await fetch(base + "/ui/account", { method: "OPTIONS" });
    expect(options.status).toBe(204);
    expect(options.headers.get("allow")).toBe("GET, HEAD, POST, OPTIONS");
    expect(seen.length).toBe(before);
    // What a page serves still reaches Next (the stand-in, which echoes forms and fails on a GET's lack of one).
    expect((await fetch(base + "/ui/login")).status).toBe(500);
    expect((await post(multipart(postedForm))).status).toBe(200);
    expect(seen.length).toBe(before + 1);
  });

  it.each([
    ["a fetch action's form", fetchForm, action],
    ["a form posted without JavaScript", postedForm, {}],
    ["a plain multipart POST (no action: Next's own 400)", [["a", "1"]] as Part[], {}],
  ])("%s reaches Next as the same form, and the connection stays open", async (_what, parts, headers) => {
    const res = await post(multipart(parts), headers);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(parts.map(([k, v, file]) => [k, file === undefined ? v : `file:${file}:${v.length}`]));
    expect((await post(multipart([["b", "2"]]))).status).toBe(200);
  });

  it("Next reads the form this server read, whatever the two parsers would make of the bytes", async () => {
    // A media type Next compares case-sensitively (so it would decode the body as JSON) and this
    // server reads as multipart: Next is handed the form as parsed here, in a type it reads so too.
    const res = await post(multipart(fetchForm), action, " Multipart/Form-Data ; boundary=b0undary");
    expect(res.status).toBe(200);
    expect(seen.at(-1)!.find(([k]) => k === "0")![1]).toBe(`[${state},"$K1"]`);
  });

  const without = (parts: Part[], name: string) => parts.filter(([k]) => k !== name);
  const replaced = (parts: Part[], name: string, value: string) => parts.map((p): Part => (p[0] === name ? [name, value] : p));
  it.each([
    ["text, not a form", () => post('[{"seq":0},"$K1"]', action, "text/plain;charset=UTF-8")],
    ["a body that is not multipart", () => post("garbage", action)],
    ["a boundary the body never uses", () => post(multipart(fetchForm, "other"), action)],
    ["two boundary parameters", () => post(multipart(fetchForm, "X"), action, "multipart/form-data; boundary=X; boundary=Y")],
    ["a root row that is not JSON", () => post(multipart(replaced(fetchForm, "0", "[{")), action)],
    ["no root row", () => post(multipart(without(fetchForm, "0")), action)],
    ["two root rows", () => post(multipart([["0", "{}"], ...fetchForm]), action)],
    ["arguments that are not a state and a form", () => post(multipart(replaced(fetchForm, "0", '[{"seq":0}]')), action)],
    ["a reference in the state", () => post(multipart(replaced(fetchForm, "0", '[{"seq":"$@1"},"$K1"]')), action)],
    ["a tag React refuses", () => post(multipart(replaced(fetchForm, "0", '[{"seq":"$nzz"},"$K1"]')), action)],
    ["a state nested too deep", () => post(multipart(replaced(fetchForm, "0", `[${"[".repeat(5000)}${"]".repeat(5000)},"$K1"]`)), action)],
    ["a list too long for React", () => post(multipart(replaced(fetchForm, "0", `[{"a":${JSON.stringify(Array.from({ length: 120_000 }, () => 1))}},"$K1"]`)), action)],
    ["another row", () => post(multipart([...fetchForm, ["1", "[]"]]), action)],
    ["a field outside the form", () => post(multipart([...fetchForm, ["x", "1"]]), action)],
    ["a field name with a NUL", () => post(multipart([...fetchForm, ["_1_a\u0000b", "1"]]), action)],
    ["more fields than any form has", () => post(multipart(Array.from({ length: 1_000 }, (_, i): Part => [`_1_f${i}`, "", ""])), action)],
    ["an empty action id", () => post(multipart(fetchForm), { "next-action": " " })],
    ["an action id that is not hex", () => post(multipart(fetchForm), { "next-action": "7f00; x" })],
  ])("a fetch action with %s is a 400 that Next never sees", async (_what, send) => {
    const before = seen.length;
    const res = await send();
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_request" });
    expect(seen.length).toBe(before);
  });

  it.each([
    ["a descriptor that is not JSON", replaced(postedForm, "$ACTION_3:0", '{"id":"7f00","bound":"$@1"')],
    ["a descriptor without an id", replaced(postedForm, "$ACTION_3:0", '{"bound":"$@1"}')],
    ["bound arguments that are not JSON", replaced(postedForm, "$ACTION_3:1", "[")],
    ["bound arguments that are missing", without(postedForm, "$ACTION_3:1")],
    ["a bound state React would decode", replaced(postedForm, "$ACTION_3:1", '["$nzz"]')],
    ["two bound arguments", replaced(postedForm, "$ACTION_3:1", '[{"seq":0},{"seq":1}]')],
    ["another action row", [...postedForm, ["$ACTION_3:2", "[]"]] as Part[]],
    ["two actions", [...postedForm, ["$ACTION_ID_7f01", ""]] as Part[]],
  ])("a form posted without JavaScript with %s is a 400 that Next never sees", async (_what, parts) => {
    const before = seen.length;
    const res = await post(multipart(parts));
    expect(res.status).toBe(400);
    expect(seen.length).toBe(before);
  });

  it("a form just under the limit that would pass it once written out again is a 413, not Next's 500", async () => {
    const bare = multipart([...postedForm, ["pad", ""]]).length;
    const body = multipart([...postedForm, ["pad", "a".repeat(MiB - bare - 10)]]);
    expect(body.length).toBeLessThanOrEqual(MiB);
    const before = seen.length;
    const res = await post(body);
    expect(res.status).toBe(413);
    expect(seen.length).toBe(before);
  });

  it("a form streamed past the limit without a Content-Length is a 413", async () => {
    const res = await post(streamed(2 * MiB)).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
    if (res instanceof Error) { expect(res.cause instanceof Error ? res.cause.message : res.message).toMatch(/EPIPE|ECONNRESET|closed|terminated|other side/i); return; }
    expect(res.status).toBe(413);
  });
});

describe("request lines no endpoint serves (defects 6 and 11)", () => {
  const paths = ["/", "/oauth/v2/token", "/oauth/v2/authorize", "/oidc/v1/end_session", "/management/v1/users", "/.well-known/openid-configuration", "/ui/console"];

  it.each(paths)("TRACE %s is 405 with Allow, unknown methods 501", async (path) => {
    const trace = await rawRequest(t.baseUrl, `TRACE ${path} HTTP/1.1\r\nHost: ${host()}\r\nConnection: close\r\n\r\n`);
    expect(trace.status).toBe(405);
    expect(trace.head).toMatch(/\r\nallow: GET, HEAD, POST/i);
    const odd = await rawRequest(t.baseUrl, `BREW ${path} HTTP/1.1\r\nHost: ${host()}\r\nConnection: close\r\n\r\n`);
    expect([400, 501]).toContain(odd.status);
  });

  it("GET * is 400; OPTIONS * is answered with the methods", async () => {
    expect((await rawRequest(t.baseUrl, `GET * HTTP/1.1\r\nHost: ${host()}\r\nConnection: close\r\n\r\n`)).status).toBe(400);
    const o = await rawRequest(t.baseUrl, `OPTIONS * HTTP/1.1\r\nHost: ${host()}\r\nConnection: close\r\n\r\n`);
    expect(o.status).toBe(204);
    expect(o.head).toMatch(/\r\nallow: /i);
  });

  it.each(["/%", "/oauth/v2/%zz", "//evil.example/x", "/management/v1/users/%E0%A4%A"])("a malformed path %s is 400", async (path) => {
    const r = await rawRequest(t.baseUrl, `GET ${path} HTTP/1.1\r\nHost: ${host()}\r\nConnection: close\r\n\r\n`);
    expect(r.status).toBe(400);
    expect(r.body).not.toMatch(/at .*\.ts:\d+/);
  });

  it("an absolute-form target naming another host is 400, never a redirect to it (defect 11)", async () => {
    for (const target of ["http://evil.example/oauth/v2/authorize", "http://evil.example/", "https://evil.example//x"]) {
      const r = await rawRequest(t.baseUrl, `GET ${target} HTTP/1.1\r\nHost: ${host()}\r\nConnection: close\r\n\r\n`);
      expect(r.status).toBe(400);
      expect(r.head).not.toMatch(/\r\nlocation:/i);
    }
  });

  it("an absolute-form target naming this server is served as its path (RFC 9112 3.2.2)", async () => {
    const r = await rawRequest(t.baseUrl, `GET ${t.issuer}/healthz HTTP/1.1\r\nHost: ${host()}\r\nConnection: close\r\n\r\n`);
    expect(r.status).toBe(200);
    expect(r.body).toContain('"ok"');
  });

  it("CONNECT is 405 with Allow, not a connection closed unanswered", async () => {
    // Node hands CONNECT to the server's own listener, which the test harness's server lacks.
    const server = createToriiServer(t.inst);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
      const r = await rawRequest(url, `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`);
      expect(r.status).toBe(405);
      expect(r.head).toMatch(/\r\nAllow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS(\r\n|$)/);
      expect(JSON.parse(r.body)).toMatchObject({ error: "invalid_request" });
      expect(r.closed).toBe(true);
    } finally {
      await new Promise<void>((r) => server.close(() => { r(); }));
    }
  });

  it("a server action with a foreign or null Origin is 403, not 500", async () => {
    for (const origin of ["https://evil.example", "null", "not a url"]) {
      const res = await fetch(t.baseUrl + "/ui/console/settings", {
        method: "POST",
        headers: { origin, "next-action": "0123456789abcdef0123456789abcdef01234567", "content-type": "text/plain;charset=UTF-8" },
        body: "[]",
      });
      expect(res.status).toBe(403);
    }
    // From this origin, a console action's arguments (a state and a form) go on to Next (here:
    // the stand-in, which serves no pages); arguments of another shape are refused before.
    const form = new FormData();
    form.set("0", '[{"seq":0},"$K1"]');
    form.set("_1_csrf", "x");
    const same = await fetch(t.baseUrl + "/ui/console/settings", {
      method: "POST",
      headers: { origin: t.baseUrl, "next-action": "0123456789abcdef0123456789abcdef01234567" },
      body: form,
    });
    expect(same.status).toBe(404);
  });
});

describe("client address behind trusted proxies (defect 3)", () => {
  const list = trustedProxyList(["10.0.0.0/8", "127.0.0.1/32", "fd00::/8"]);

  it("takes the rightmost X-Forwarded-For address that is not a trusted proxy", () => {
    expect(resolveClientAddress("10.1.2.3", "6.6.6.6, 203.0.113.9, 10.0.0.5", list)).toBe("203.0.113.9");
    expect(resolveClientAddress("::ffff:127.0.0.1", "1.1.1.1, 2001:db8::1", list)).toBe("2001:db8::1");
    expect(resolveClientAddress("fd00::1", "[2001:db8::2]:443", list)).toBe("2001:db8::2");
    expect(resolveClientAddress("10.0.0.1", "10.0.0.2, 10.0.0.3", list)).toBe("10.0.0.2");
  });

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy", () => {
    expect(resolveClientAddress("198.51.100.7", "1.2.3.4", list)).toBe("198.51.100.7");
    expect(resolveClientAddress("198.51.100.7", "1.2.3.4", trustedProxyList([]))).toBe("198.51.100.7");
  });

  it("stops at a hop that is not an address", () => {
    expect(resolveClientAddress("10.0.0.1", "1.2.3.4, garbage", list)).toBe("10.0.0.1");
  });

  it("limits count an IPv4 address as it is and an IPv6 address by its /64", () => {
    expect(addressForLimits("198.51.100.7")).toBe("198.51.100.7");
    expect(addressForLimits("unknown")).toBe("unknown");
    expect(addressForLimits("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    expect(addressForLimits("2001:db8:1:2:ffff::9")).toBe("2001:db8:1:2::/64");
    expect(addressForLimits("2001:DB8:0001:0002::")).toBe("2001:db8:1:2::/64");
    expect(addressForLimits("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressForLimits("::1")).toBe("0:0:0:0::/64");
    expect(addressForLimits("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(addressForLimits("2001:db8:aa:bb::192.0.2.1")).toBe("2001:db8:aa:bb::/64");
    expect(addressForLimits("64:ff9b::192.0.2.1")).toBe("64:ff9b:0:0::/64");
  });

  it("resolves each request of a keep-alive connection by its own X-Forwarded-For", () => {
    const proxy = { remoteAddress: "10.0.0.1" };
    expect(connectionClientAddress(proxy, "203.0.113.9", list)).toBe("203.0.113.9");
    expect(connectionClientAddress(proxy, "203.0.113.9", list)).toBe("203.0.113.9");
    expect(connectionClientAddress(proxy, "198.51.100.1", list)).toBe("198.51.100.1");
    expect(connectionClientAddress(proxy, undefined, list)).toBe("10.0.0.1");
    const direct = { remoteAddress: "::ffff:198.51.100.7" };
    expect(connectionClientAddress(direct, "1.2.3.4", list)).toBe("198.51.100.7");
  });
});
