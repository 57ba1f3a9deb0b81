import type { IncomingMessage, ServerResponse } from "node:http";
import { BodyTooLarge, MAX_BODY_BYTES, preloadBody } from "@/lib/http/body";
import { knownBody } from "@/lib/http/responses";

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
    req.on("error", reject);
  });
}

/**
 * Builds the Web `Request` a lib/ handler expects from a Node request, on the issuer's origin.
 * The body, already read, is handed over as bytes (`preloadBody`, read by lib/http/body.ts).
 */
export function toWebRequest(req: IncomingMessage, origin: string, body: Buffer | null): Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const method = req.method ?? "GET";
  const request = new Request(origin + (req.url ?? "/"), { method, headers });
  return method === "GET" || method === "HEAD" || !body ? request : preloadBody(request, body);
}

export async function sendWebResponse(res: ServerResponse, response: Response, extraHeaders: Record<string, string>): Promise<void> {
  // Header names are case-insensitive: a handler's own value replaces the server default.
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(extraHeaders)) headers[k.toLowerCase()] = v;
  response.headers.forEach((value, key) => {
    if (key === "set-cookie") return;
    headers[key] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers["set-cookie"] = cookies;
  const text = knownBody(response);
  // A text body goes to Node as the string itself: Node then writes the head and the body as one
  // string in one write, where a Buffer would take a copy and a gathered write of two parts.
  const body = text ?? (response.body ? Buffer.from(await response.arrayBuffer()) : null);
  if (body !== null) headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.length);
  res.writeHead(response.status, headers);
  res.end(body);
}
