/**
 * What the core reads of an HTTP request. A Web `Request` is one (the App Router's route files
 * and tests pass theirs); the production server builds a lighter one straight from Node's
 * request (lib/server/node-adapter.ts), because constructing a Web `Request` costs more than
 * answering a JWKS or client credentials request does (`npm run bench`: a third of the JWKS
 * throughput, a sixth of client credentials'). So handlers read only these members.
 */
export interface HttpRequest {
  readonly method: string;
  /** Absolute, on the issuer's origin. */
  readonly url: string;
  readonly headers: HeaderReader;
  /** The body as a stream, when it has not been read yet (a Web request's); see lib/http/body.ts. */
  readonly body: ReadableStream<Uint8Array> | null;
  /** The body, when the server has already read it from the socket (with its limit). */
  readonly preloadedBody?: Buffer;
}

/** Header lookup as `Headers.get` does it: case-insensitive, repeated headers joined by ", ". */
export interface HeaderReader {
  get(name: string): string | null;
  has(name: string): boolean;
}
