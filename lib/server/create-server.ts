import { randomBytes } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { Config } from "@/lib/config";
import { CLIENT_ADDRESS_HEADER, resolveClientAddress } from "@/lib/http/client-address";
import { API_CSP, commonSecurityHeaders, pageCsp, setsOwnCsp } from "@/lib/http/security-headers";
import { log } from "@/lib/log";
import { ROUND_TRIPS_HEADER, type RoundTripCounter } from "@/lib/db/round-trips";
import { BodyTooLarge, readBody, sendWebResponse, toWebRequest } from "./node-adapter";
import { fastHandlerFor } from "./routes";

export type NextRequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

/**
 * The production HTTP server: back-channel endpoints straight to their Web handlers, every other
 * request to Next (or to `fallback` in tests that run without a Next build).
 */
export function createToriiServer(
  cfg: Config,
  fallback?: NextRequestHandler,
  opts: { roundTrips?: RoundTripCounter } = {},
): http.Server {
  const common = commonSecurityHeaders(cfg.issuer);
  const origin = new URL(cfg.issuer).origin;
  // Built once, not per request: the defaults every back-channel answer starts from.
  const apiHeaders = Object.freeze({ ...common, "Content-Security-Policy": API_CSP });

  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    // Handlers learn the peer address only from this header, which a client can never set itself.
    const address = resolveClientAddress(req.socket.remoteAddress, header(req, "x-forwarded-for"), cfg.trustProxy);
    setRequestHeader(req, CLIENT_ADDRESS_HEADER, address);

    const pathname = (req.url ?? "/").split("?")[0]!;
    const handler = fastHandlerFor(pathname);
    try {
      if (handler) {
        let body: Buffer | null = null;
        if (req.method !== "GET" && req.method !== "HEAD") body = await readBody(req);
        const response = await handler(toWebRequest(req, origin, body));
        await sendWebResponse(res, response, apiHeaders);
        return;
      }
      for (const [k, v] of Object.entries(common)) res.setHeader(k, v);
      // A request never chooses its own policy: Next takes the script nonce from this header.
      setRequestHeader(req, "content-security-policy", undefined);
      if (!setsOwnCsp(pathname)) {
        const csp = pageCsp(randomBytes(16).toString("base64"));
        res.setHeader("Content-Security-Policy", csp);
        setRequestHeader(req, "content-security-policy", csp);
      }
      if (fallback) return await fallback(req, res);
      res.writeHead(404, { "Content-Type": "application/json" }).end(JSON.stringify({ error: "not_found" }));
    } catch (err) {
      if (err instanceof BodyTooLarge) {
        if (!res.headersSent) res.writeHead(413, { "Content-Type": "application/json", ...common, Connection: "close" });
        res.end(JSON.stringify({ error: "invalid_request", error_description: "Request body too large." }), () => req.destroy());
        return;
      }
      log().error({ err, path: pathname }, "request failed");
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "application/json", ...common });
      res.end(JSON.stringify({ error: "server_error", error_description: "The server encountered an unexpected condition." }));
    }
  };

  const counter = opts.roundTrips;
  if (!counter) return http.createServer(serve);
  // Benchmark only (IDP_DEBUG_DB_ROUND_TRIPS=1): the statements each request sent, in a response
  // header written with the status line (a redirect or an API answer has done all its work by then).
  return http.createServer((req, res) =>
    counter.run((tally) => {
      const writeHead = res.writeHead;
      res.writeHead = function (this: ServerResponse, ...args: Parameters<typeof writeHead>) {
        if (!this.headersSent) this.setHeader(ROUND_TRIPS_HEADER, String(tally.n));
        return writeHead.apply(this, args);
      } as typeof writeHead;
      return serve(req, res);
    }),
  );
}

/** Replaces (or with `undefined` removes) a request header in both of Node's views of it. */
function setRequestHeader(req: IncomingMessage, name: string, value: string | undefined): void {
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() === name) req.rawHeaders.splice(i, 2), (i -= 2);
  }
  if (value === undefined) {
    delete req.headers[name];
  } else {
    req.headers[name] = value;
    req.rawHeaders.push(name, value);
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
