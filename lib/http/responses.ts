import type { Logger } from "@/lib/log";
import { DATABASE_UNAVAILABLE, isDatabaseUnavailable } from "@/lib/db/unavailable";
import { InvalidRequest, OAuthError, ServerError, TemporarilyUnavailable } from "@/lib/protocol/errors";
import { isInputDataError } from "./text-input";
import type { HttpRequest } from "@/lib/http/request";

export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;

/**
 * A response whose body is text known at construction. Making a Web `Response` with a body
 * builds a stream for it (a tenth of a JWKS request's CPU), which server.ts never reads: it writes
 * the text to the socket as it is (lib/server/node-adapter.ts). So the stream is made only when
 * something reads the body the Web way (Next's route handlers, tests): a full `Response` with the
 * same text, status and headers, made on first use.
 *
 * The headers likewise: undici's `Headers` validates and appends each field one by one, which cost
 * about three times building the answer's fields as a record (2 µs a response in a loop, more
 * among other requests), on answers that take 0.1 ms in all. They are kept as a record, names in
 * lower case, checked as `Headers` checks them, and a `Headers` is made from it the first time
 * anything reads `headers`; from then on that object is the response's headers (a caller may
 * change it), and server.ts writes from it instead of the record.
 */
// What `new Response(text)` sets when the caller gave no type.
const TEXT_TYPE = "text/plain;charset=UTF-8";

class TextResponse extends Response {
  readonly #text: string;
  #fields: Record<string, string> | undefined;
  #headers: Headers | undefined;
  #full: Response | undefined;

  constructor(text: string, init: ResponseInit) {
    super(null, { status: init.status, statusText: init.statusText });
    this.#text = text;
    const fields = headerFields(init.headers);
    if (fields) {
      fields["content-type"] ??= TEXT_TYPE;
      this.#fields = fields;
    } else {
      const headers = new Headers(init.headers);
      if (!headers.has("content-type")) headers.set("content-type", TEXT_TYPE);
      this.#headers = headers;
    }
  }

  override get headers(): Headers {
    this.#headers ??= new Headers(this.#fields);
    return this.#headers;
  }

  /**
   * `headers.append(name, value)` or `headers.set(name, value)`, on the record while nothing has
   * read `headers` (checked as `Headers` checks it); on `headers` otherwise, and for Set-Cookie.
   */
  addField(name: string, value: string, how: "append" | "set"): void {
    const key = name.toLowerCase();
    if (this.#headers || !this.#fields || key === "set-cookie") {
      this.headers[how](name, value);
      return;
    }
    const checked = checkedField(name, value);
    const earlier = this.#fields[key];
    this.#fields[key] = how === "append" && earlier !== undefined ? `${earlier}, ${checked}` : checked;
  }

  /** The header fields as given (names in lower case), while nothing has read `headers`. */
  get untouchedFields(): Readonly<Record<string, string>> | undefined {
    return this.#headers ? undefined : this.#fields;
  }

  get knownText(): string {
    return this.#text;
  }

  #read(): Response {
    this.#full ??= new Response(this.#text, { status: this.status, statusText: this.statusText, headers: this.headers });
    return this.#full;
  }

  override get body(): Response["body"] {
    return this.#read().body;
  }
  override get bodyUsed(): boolean {
    return this.#full?.bodyUsed ?? false;
  }
  override text(): Promise<string> {
    return this.#read().text();
  }
  override json(): Promise<unknown> {
    return this.#read().json();
  }
  override arrayBuffer(): Promise<ArrayBuffer> {
    return this.#read().arrayBuffer();
  }
  override blob(): Promise<Blob> {
    return this.#read().blob();
  }
  override formData(): Promise<FormData> {
    return this.#read().formData();
  }
  override clone(): Response {
    return this.#read().clone();
  }
}

/** A response whose body is `text` (or none, for HEAD); its text stays readable as usual. */
export function textResponse(text: string | null, init: ResponseInit): Response {
  return text === null ? new Response(null, init) : new TextResponse(text, init);
}

/** The text a response was made with by `textResponse`, if it was. */
export function knownBody(response: Response): string | undefined {
  return response instanceof TextResponse ? response.knownText : undefined;
}

/**
 * Adds a header field as `response.headers.append` does (a field already there gets `, value`),
 * without making undici's `Headers` for a text response whose headers nobody has read.
 */
export function appendHeader(response: Response, name: string, value: string): void {
  if (response instanceof TextResponse) response.addField(name, value, "append");
  else response.headers.append(name, value);
}

/** Sets a header field as `response.headers.set` does, on a text response's record while it has one. */
export function setHeader(response: Response, name: string, value: string): void {
  if (response instanceof TextResponse) response.addField(name, value, "set");
  else response.headers.set(name, value);
}

/**
 * The header fields of a response made by `textResponse` (names in lower case, no Set-Cookie),
 * when nothing has read or changed them through `headers`: what server.ts writes without making
 * a `Headers`. Undefined otherwise.
 */
export function knownHeaderFields(response: Response): Readonly<Record<string, string>> | undefined {
  return response instanceof TextResponse ? response.untouchedFields : undefined;
}

// RFC 9110 5.1 (a token), and what `new Headers` refuses in a value (the Fetch standard's NUL, CR
// and LF; WebIDL's ByteString, anything past U+00FF) with a TypeError: the same error, at
// construction, for a record.
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[\0\r\n]|[^\0-\xff]/;
// A value's leading and trailing spaces and tabs, which `Headers` strips (Fetch: normalize).
const EDGE_WHITESPACE = /^[\t ]+|[\t ]+$/g;

/**
 * A plain record of headers as `Headers` would hold them: names in lower case, values stripped,
 * refused as `Headers` refuses them; a name given twice in different cases is joined with ", " as
 * `Headers` appends it. Undefined for a `Headers` or a list of pairs, which go to `Headers` as they are.
 */
function headerFields(init: HeadersInit | undefined): Record<string, string> | undefined {
  if (init === undefined) return {};
  if (init instanceof Headers || Array.isArray(init)) return undefined;
  const fields: Record<string, string> = {};
  for (const name of Object.keys(init)) {
    const value = checkedField(name, String(init[name]));
    const key = name.toLowerCase();
    // Set-Cookie never goes into a record (a response's cookies are a list): Headers keeps each.
    if (key === "set-cookie") return undefined;
    const earlier = fields[key];
    fields[key] = earlier === undefined ? value : `${earlier}, ${value}`;
  }
  return fields;
}

/** A field's value as `Headers` would keep it (edge spaces stripped), or the `TypeError` it throws. */
function checkedField(name: string, value: string): string {
  if (!FIELD_NAME.test(name)) throw new TypeError(`Invalid header name: ${name}`);
  if (BAD_VALUE.test(value)) throw new TypeError(`Invalid value for header ${name}`);
  if (value.startsWith(" ") || value.startsWith("\t") || value.endsWith(" ") || value.endsWith("\t")) return value.replace(EDGE_WHITESPACE, "");
  return value;
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return textResponse(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8", ...headers },
  });
}

/** Back-channel error rendering: `{error, error_description}` with the error's status. */
export function oauthErrorResponse(err: OAuthError, extra: Record<string, string> = {}): Response {
  return json(err.toJSON(), err.status, { ...NO_STORE, ...err.headers, ...extra });
}

/** Wraps a back-channel handler: typed errors become their JSON, anything else a logged 500 without internals. */
export function backChannel<E extends { log: Logger }>(handler: (engine: E, request: HttpRequest) => Promise<Response>) {
  return async (engine: E, request: HttpRequest): Promise<Response> => {
    try {
      return await handler(engine, request);
    } catch (err) {
      if (err instanceof OAuthError) return oauthErrorResponse(err);
      // A value the client sent that the database refused (lib/http/text-input.ts) is its error.
      if (isInputDataError(err)) return oauthErrorResponse(new InvalidRequest("A request parameter has a value that cannot be processed."));
      return oauthErrorResponse(unexpectedOAuthError(engine.log, err, { path: new URL(request.url).pathname }));
    }
  };
}

/**
 * The OAuth error for a failure no handler expected, logged: `temporarily_unavailable` (503 with
 * `Retry-After`) while the database is out of reach (lib/db/unavailable.ts), else `server_error`
 * (500). Neither says more than that.
 */
export function unexpectedOAuthError(log: Logger, err: unknown, context: Record<string, unknown> = {}): OAuthError {
  if (isDatabaseUnavailable(err)) {
    log.warn({ err, ...context }, "database unavailable");
    return new TemporarilyUnavailable(DATABASE_UNAVAILABLE.message, { ...DATABASE_UNAVAILABLE.headers });
  }
  log.error({ err, ...context }, "unhandled error");
  return new ServerError("The server encountered an unexpected condition.");
}

function redirect(status: 302 | 303, location: string, cookies: readonly string[]): Response {
  const headers = new Headers({ Location: location, ...NO_STORE });
  for (const c of cookies) headers.append("Set-Cookie", c);
  return new Response(null, { status, headers });
}

/** 303 so that a POSTed form is followed by a GET (Post/Redirect/Get): a reload never re-posts. */
export function seeOther(location: string, cookies: readonly string[] = []): Response {
  return redirect(303, location, cookies);
}

/** 302 for a redirect answering a GET. */
export function found(location: string, cookies: readonly string[] = []): Response {
  return redirect(302, location, cookies);
}

export function methodNotAllowed(allowed: string[]): Response {
  return json({ error: "invalid_request", error_description: `Method not allowed; use ${allowed.join(" or ")}.` }, 405, {
    Allow: allowed.join(", "),
  });
}
