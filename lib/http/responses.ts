import type { Logger } from "@/lib/log";
import { InvalidRequest, OAuthError } from "@/lib/protocol/errors";
import { isInputDataError } from "./text-input";

export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;

/**
 * Text bodies by the Response they were made for: server.ts writes them to the socket as they
 * are instead of reading them back through the Response's stream (lib/server/node-adapter.ts).
 */
const bodies = new WeakMap<Response, string>();

/** A response whose body is `text` (or none, for HEAD); its text stays readable as usual. */
export function textResponse(text: string | null, init: ResponseInit): Response {
  const response = new Response(text, init);
  if (text !== null) bodies.set(response, text);
  return response;
}

/** The text a response was made with by `textResponse`, if it was. */
export function knownBody(response: Response): string | undefined {
  return bodies.get(response);
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
export function backChannel<E extends { log: Logger }>(handler: (engine: E, request: Request) => Promise<Response>) {
  return async (engine: E, request: Request): Promise<Response> => {
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
