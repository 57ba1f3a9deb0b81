import { randomBytes } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Config } from "@/lib/config";
import type { Engine } from "@/lib/engine";
import { CLIENT_ADDRESS_HEADER, connectionClientAddress, trustedProxyList } from "@/lib/http/client-address";
import { API_CSP, commonSecurityHeaders, pageCsp, setsOwnCsp } from "@/lib/http/security-headers";
import { BodyTooLarge, MAX_BODY_BYTES } from "@/lib/http/body";
import { readBody, RequestAborted, sendWebResponse, toHttpRequest } from "./node-adapter";
import { applyServerLimits, CONNECTIONS_CHECKING_INTERVAL_MS, DEFAULT_SERVER_LIMITS, type ServerLimits } from "./limits";
import { replayedRequest, screenActionBody } from "./form-screen";
import { isActionBody, refusalBody, screenDeclaredLength, screenPageMethod, screenRequestLine, screenServerActionOrigin, type PageScreen, type Refusal } from "./request-screen";
import { ROUND_TRIPS_HEADER, type RoundTripCounter } from "@/lib/db/round-trips";
import { DATABASE_UNAVAILABLE, isDatabaseUnavailable } from "@/lib/db/unavailable";
import { unavailablePage } from "@/lib/oauth/authorize-pages";
import { fastHandlerFor } from "./routes";

export type NextRequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

/**
 * The production HTTP server: back-channel endpoints straight to their Web handlers, every other
 * request to Next (or to `fallback` in tests that run without a Next build).
 */
export function createToriiServer(engine: Engine, fallback?: NextRequestHandler, screenPage?: PageScreen): http.Server {
  let listener = toriiRequestListener(engine, fallback, screenPage);
  const counter = engine.database.roundTrips;
  if (counter) listener = countingRoundTrips(counter, listener);
  const server = http.createServer({ connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS }, listener);
  applyServerLimits(server, serverLimits(engine.config));
  server.on("connect", refuseTunnel);
  return server;
}

/**
 * Node hands a CONNECT request to the server's "connect" listeners instead of the request
 * listener, and without one closes the connection unanswered: it is answered as every other
 * method no endpoint serves is (405 with Allow), then the connection closes.
 */
function refuseTunnel(req: IncomingMessage, socket: Duplex): void {
  // CONNECT is one of the methods screenRequestLine refuses whatever the target.
  const { refusal } = screenRequestLine(req.method, req.url, "") as { refusal: Refusal };
  const body = refusalBody(refusal);
  const fields = { ...refusal.headers, "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)), "Cache-Control": "no-store", Connection: "close" };
  socket.end(`HTTP/1.1 ${refusal.status} ${http.STATUS_CODES[refusal.status]}\r\n${Object.entries(fields).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n${body}`);
}

/** The timeouts and connection cap of the server for `cfg` (README, "Limits"). */
export function serverLimits(cfg: Config): ServerLimits {
  return { ...DEFAULT_SERVER_LIMITS, maxConnections: cfg.maxConnections };
}

/** The request listener behind `createToriiServer` (tests mount it on their own listening server). */
export function toriiRequestListener(engine: Engine, fallback?: NextRequestHandler, screenPage?: PageScreen): http.RequestListener {
  const cfg = engine.config;
  const common = commonSecurityHeaders(cfg.issuer);
  const issuerUrl = new URL(cfg.issuer);
  const origin = issuerUrl.origin;
  const trusted = trustedProxyList(cfg.trustedProxies);
  // Built once, not per request: the defaults every back-channel answer starts from.
  const apiHeaders = Object.freeze({ ...common, "Content-Security-Policy": API_CSP });

  const refuse = (req: IncomingMessage, res: ServerResponse, refusal: Refusal) => {
    const body = refusal.status === 204 ? "" : refusalBody(refusal, (req.url ?? "").split("?")[0]);
    res.writeHead(refusal.status, {
      ...common,
      "Content-Security-Policy": API_CSP,
      "Cache-Control": "no-store",
      ...(body ? { "Content-Type": "application/json" } : {}),
      ...refusal.headers,
    });
    // A refused body is never read: the connection closes rather than wait for it.
    closeAfterAnswer(req, res);
    res.end(body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // Handlers learn the peer address only from this header, which a client can never set itself.
    const address = connectionClientAddress(req.socket, header(req, "x-forwarded-for"), trusted);
    setRequestHeader(req, CLIENT_ADDRESS_HEADER, address);

    const line = screenRequestLine(req.method, req.url, issuerUrl.host);
    if ("refusal" in line) { refuse(req, res, line.refusal); return; }
    req.url = line.url;
    const pathname = req.url.split("?")[0]!;
    const handler = fastHandlerFor(pathname);
    // Server actions exist only on pages, which Next serves.
    const early = screenDeclaredLength(req.headers, MAX_BODY_BYTES) ?? (handler ? null : (screenPageMethod(req.method!) ?? screenServerActionOrigin(req.method!, req.headers) ?? screenPage?.(req.headers) ?? null));
    if (early) { refuse(req, res, early); return; }
    try {
      if (handler) {
        let body: Buffer | null = null;
        if (req.method !== "GET" && req.method !== "HEAD") body = await readBody(req);
        const response = await handler(engine, toHttpRequest(req, origin, body));
        const reading = sendWebResponse(res, response, apiHeaders);
        if (reading) await reading;
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
      if (fallback) {
        // A route Next serves that refused a streamed body as too large (lib/http/body.ts) has not
        // read the rest of it: close the connection instead of waiting for all of it.
        res.on("finish", () => {
          if (res.statusCode === 413) closeAfterAnswer(req, res);
        });
        if (!isActionBody(req.method!, req.headers)) { await fallback(req, res); return; }
        // Read and checked here first: Next answers a body it cannot decode with a 500 (form-screen.ts).
        const screened = await screenActionBody(req.headers, await readBody(req));
        if ("refusal" in screened) { refuse(req, res, screened.refusal); return; }
        await fallback(replayedRequest(req, screened), res); return;
      }
      res.writeHead(404, { "Content-Type": "application/json" }).end(JSON.stringify({ error: "not_found" }));
    } catch (err) {
      if (err instanceof BodyTooLarge) {
        if (!res.headersSent) res.writeHead(413, { "Content-Type": "application/json", ...common });
        closeAfterAnswer(req, res);
        res.end(refusalBody({ status: 413, message: "Request body too large." }, pathname));
        return;
      }
      if (err instanceof RequestAborted) return;
      if (isDatabaseUnavailable(err)) {
        engine.log.warn({ err, path: pathname }, "database unavailable");
        // A browser (at the authorization endpoint's callback, say) is shown a page in its
        // language; a program gets the OAuth error's JSON.
        if (!res.headersSent && header(req, "accept")?.includes("text/html")) {
          const page = unavailablePage({ cookie: header(req, "cookie"), acceptLanguage: header(req, "accept-language"), headers: DATABASE_UNAVAILABLE.headers });
          const reading = sendWebResponse(res, page, apiHeaders);
          if (reading) await reading;
          return;
        }
        if (!res.headersSent) res.writeHead(503, { "Content-Type": "application/json", ...DATABASE_UNAVAILABLE.headers, ...common });
        res.end(JSON.stringify({ error: "temporarily_unavailable", error_description: DATABASE_UNAVAILABLE.message }));
        return;
      }
      engine.log.error({ err, path: pathname }, "request failed");
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "application/json", ...common });
      res.end(JSON.stringify({ error: "server_error", error_description: "The server encountered an unexpected condition." }));
    }
  };
  return (req, res) => {
    void handle(req, res);
  };
}

/** How long a refused body may still arrive (and be discarded) after the answer was sent. */
const LINGER_MS = 1_000;

/**
 * Closes the connection of a request whose body was not read, once the answer is out. Not at
 * once: closing a socket while the client is still sending makes the kernel reset the
 * connection, and the client then loses the answer it has not read yet. So what still arrives
 * is discarded for a moment (a "lingering close"), then the socket goes, however much the
 * client claimed it would send. A request whose body arrives in that moment keeps its
 * connection, as the answer's keep-alive promised: a small body often lands just after a quick
 * refusal.
 */
function closeAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  // Judged once the answer is out: a body-less request is complete only after its handler started.
  const close = () => {
    if (req.complete) return;
    const linger = setTimeout(() => req.socket.destroy(), LINGER_MS);
    linger.unref();
    req.once("end", () => { clearTimeout(linger); });
    req.resume();
  };
  if (res.writableFinished) close();
  else res.once("finish", close);
}

/** Replaces (or with `undefined` removes) a request header in both of Node's views of it. */
function setRequestHeader(req: IncomingMessage, name: string, value: string | undefined): void {
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() === name) {
      req.rawHeaders.splice(i, 2);
      i -= 2;
    }
  }
  if (value === undefined) {
    // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- IncomingHttpHeaders is a plain record of header names.
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

/**
 * Benchmark only (IDP_DEBUG_DB_ROUND_TRIPS=1): the statements each request sent, in a response
 * header written with the status line (a redirect or an API answer has done all its work by then).
 */
function countingRoundTrips(counter: RoundTripCounter, listener: http.RequestListener): http.RequestListener {
  return (req, res) => {
    counter.run((tally) => {
      const writeHead = res.writeHead.bind(res);
      res.writeHead = function (this: ServerResponse, ...args: Parameters<typeof writeHead>) {
        if (!this.headersSent) this.setHeader(ROUND_TRIPS_HEADER, String(tally.n));
        return writeHead(...args);
      } as typeof writeHead;
      listener(req, res);
    });
  };
}
