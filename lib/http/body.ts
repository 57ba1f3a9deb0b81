import { OAuthError } from "@/lib/protocol/errors";
import type { HttpRequest } from "./request";

/**
 * The one way request bodies are read (issue 16): every body has a limit, and a body over it is
 * refused without being buffered. Both the fast routes (server.ts) and the routes Next serves
 * read through here; server.ts also refuses a declared `Content-Length` over the limit before
 * reading anything (lib/server/request-screen.ts).
 */

/** Largest body any endpoint reads (a management call with a 512 KiB logo as a base64 data URL fits). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Forms of the hosted login, logout and the authorization endpoint carry a few short fields. */
export const MAX_FORM_BYTES = 64 * 1024;

/** 413; an OAuthError so that back-channel endpoints render it as their usual JSON error. */
export class BodyTooLarge extends OAuthError {
  constructor() {
    super("invalid_request", "The request body is too large.", 413);
  }
}

/**
 * The body of `request` as UTF-8 text, reading at most `limit` bytes: a declared or actual
 * length over it throws `BodyTooLarge`, leaving the rest unread.
 */
export async function readBodyText(request: HttpRequest, limit = MAX_BODY_BYTES): Promise<string> {
  // Read already by server.ts from the socket (with its own limit): no Web stream per request.
  const ready = request.preloadedBody;
  if (ready) {
    if (ready.length > limit) throw new BodyTooLarge();
    return ready.toString("utf8");
  }
  const declared = request.headers.get("content-length");
  // Over the limit the rest is left unread, not cancelled: cancelling the stream of a Node
  // request destroys its socket before the 413 can be sent. The server closes the connection
  // once the 413 is out (lib/server/create-server.ts), and until then the unread body waits in
  // the socket's buffers, not in memory here.
  if (declared !== null && Number(declared) > limit) throw new BodyTooLarge();
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      reader.releaseLock();
      throw new BodyTooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Only the media type counts: parameters such as `charset` are allowed and ignored. */
export function isFormEncoded(request: HttpRequest): boolean {
  return (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase() === "application/x-www-form-urlencoded";
}

/** What a browser-facing route answers for a body over the limit (it never shows a page for one). */
export function bodyTooLargeResponse(): Response {
  return new Response("The request body is too large.", {
    status: 413,
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", Connection: "close" },
  });
}
