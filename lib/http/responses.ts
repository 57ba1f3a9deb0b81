import type { Logger } from "@/lib/log";
import { InvalidRequest, OAuthError } from "@/lib/protocol/errors";
import { isInputDataError } from "./text-input";
import type { HttpRequest } from "@/lib/http/request";

export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;

/**
 * A response whose body is text known at construction. Making a Web `Response` with a body
 * builds a stream for it (a tenth of a JWKS request's CPU), which server.ts never reads: it writes
 * the text to the socket as it is (lib/server/node-adapter.ts). So the stream is made only when
 * something reads the body the Web way (Next's route handlers, tests): a full `Response` with the
 * same text, status and headers, made on first use.
 */
class TextResponse extends Response {
  readonly #text: string;
  #full: Response | undefined;

  constructor(text: string, init: ResponseInit) {
    super(null, init);
    this.#text = text;
    // What `new Response(text)` sets when the caller gave no type.
    if (!this.headers.has("content-type")) this.headers.set("content-type", "text/plain;charset=UTF-8");
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
      engine.log.error({ err, path: new URL(request.url).pathname }, "unhandled error");
      return json({ error: "server_error", error_description: "The server encountered an unexpected condition." }, 500, {
        ...NO_STORE,
      });
    }
  };
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
