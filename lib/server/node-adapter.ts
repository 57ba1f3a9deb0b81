import type { IncomingMessage, ServerResponse } from "node:http";
import { BodyTooLarge, MAX_BODY_BYTES } from "@/lib/http/body";
import type { HeaderReader, HttpRequest } from "@/lib/http/request";
import { knownBody, knownHeaderFields } from "@/lib/http/responses";

/** The client closed the connection before its body was complete: there is no one to answer. */
export class RequestAborted extends Error {}

/** Reads a fast route's body, at most `limit` bytes (lib/http/body.ts): more is refused with 413. */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers["content-length"] ?? 0) > limit) { reject(new BodyTooLarge()); return; }
    // A client that goes away mid-body leaves nothing waiting for an "end" that never comes.
    req.on("close", () => {
      if (!req.complete) reject(new RequestAborted());
    });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      // Past the limit the rest is discarded as it arrives; the caller answers 413 and closes.
      if (size > limit) { reject(new BodyTooLarge()); return; }
      chunks.push(c);
    });
    req.on("end", () => { resolve(Buffer.concat(chunks)); });
    // Node reports a connection reset mid-body (the client went away, or the request timeout
    // closed it) as an "aborted" error before "close": the same nobody-to-answer case, not a fault.
    req.on("error", (err) => { reject(req.complete ? err : new RequestAborted()); });
  });
}

/**
 * The request a lib/ handler reads (lib/http/request.ts), built from a Node request on the
 * issuer's origin. Not a Web `Request`: constructing one (its headers validated one by one, its
 * abort signal) cost more than a JWKS or client credentials answer. The body, already read, is
 * handed over as bytes.
 */
export function toHttpRequest(req: IncomingMessage, origin: string, body: Buffer | null): HttpRequest {
  return new NodeRequest(req.method ?? "GET", origin + (req.url ?? "/"), req.rawHeaders, body);
}

class NodeRequest implements HttpRequest {
  readonly headers: NodeHeaders;
  readonly body = null;
  readonly preloadedBody: Buffer | undefined;

  constructor(
    readonly method: string,
    readonly url: string,
    rawHeaders: readonly string[],
    body: Buffer | null,
  ) {
    this.headers = new NodeHeaders(rawHeaders);
    this.preloadedBody = body ?? undefined;
  }
}

/**
 * `Headers.get` over Node's raw header list: names case-insensitive, a repeated header's values
 * joined by ", " (as the Fetch standard does, where Node's own `req.headers` keeps only the first
 * `Authorization` or `Content-Type`). Built on first use.
 */
class NodeHeaders implements HeaderReader {
  #byName: Map<string, string> | undefined;

  constructor(private readonly raw: readonly string[]) {}

  get(name: string): string | null {
    return this.#map().get(name.toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.#map().has(name.toLowerCase());
  }

  #map(): Map<string, string> {
    if (this.#byName) return this.#byName;
    const map = new Map<string, string>();
    for (let i = 0; i < this.raw.length; i += 2) {
      const name = this.raw[i]!.toLowerCase();
      const value = this.raw[i + 1]!;
      const earlier = map.get(name);
      map.set(name, earlier === undefined ? value : `${earlier}, ${value}`);
    }
    return (this.#byName = map);
  }
}

/**
 * Writes a handler's response. A text response (`textResponse`, `json`) is written at once and
 * nothing is returned; only a body that must be read first returns a promise, so the usual answer
 * makes none (docs/architecture.md, "Promises on the hot path").
 */
export function sendWebResponse(res: ServerResponse, response: Response, extraHeaders: Record<string, string>): Promise<void> | undefined {
  // Header names are case-insensitive: a handler's own value replaces the server default.
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(extraHeaders)) headers[k.toLowerCase()] = v;
  // A text response's fields as its handler gave them, without making undici's Headers for them.
  const fields = knownHeaderFields(response);
  if (fields) {
    for (const key in fields) headers[key] = fields[key]!;
  } else {
    response.headers.forEach((value, key) => {
      if (key === "set-cookie") return;
      headers[key] = value;
    });
    const cookies = response.headers.getSetCookie();
    if (cookies.length) headers["set-cookie"] = cookies;
  }
  const text = knownBody(response);
  // A text body goes to Node as the string itself: Node then writes the head and the body as one
  // string in one write, where a Buffer would take a copy and a gathered write of two parts.
  if (text !== undefined || !response.body) {
    write(res, response.status, headers, text ?? null);
    return undefined;
  }
  return response.arrayBuffer().then((b) => {
    write(res, response.status, headers, Buffer.from(b));
  });
}

function write(res: ServerResponse, status: number, headers: Record<string, string | string[]>, body: string | Buffer | null): void {
  if (body !== null) headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.length);
  res.writeHead(status, headers);
  res.end(body);
}
