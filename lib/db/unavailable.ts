/**
 * Whether an error means the database could not be reached or dropped this request's connection
 * (a restart, a failover, a network cut, a full connection table), rather than that the request
 * or the code is wrong. Such a request is answered 503 with `Retry-After` (RFC 9110 §15.6.4): the
 * same request will work once the database is back, and clients, proxies and load balancers
 * retry a 503 where they would report a 500.
 *
 * Drizzle wraps the driver's error (`cause`), so the chain is walked a few levels.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === "string" && UNAVAILABLE.test(e.code)) return true;
  }
  return false;
}

/** How long a client should wait before retrying: about what a PostgreSQL restart takes. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

/** What every endpoint family says with its 503, in its own shape, and the header it adds. */
export const DATABASE_UNAVAILABLE = {
  message: "The service is temporarily unavailable; try again shortly.",
  headers: { "Retry-After": String(DATABASE_RETRY_AFTER_SECONDS) },
} as const;

const UNAVAILABLE = new RegExp(
  "^(?:" +
    [
      // postgres.js: the connection closed, was ended or destroyed under the query, or never opened.
      "CONNECTION_CLOSED|CONNECTION_ENDED|CONNECTION_DESTROYED|CONNECT_TIMEOUT",
      // The socket: nobody listening, reset, timed out, no route, no such host (yet).
      "ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN",
      // SQLSTATE class 08 (connection exception); 57P01-57P03 (the server is shutting down, crashed,
      // or not yet accepting connections); 53300 (too many connections).
      "08[0-9A-Z]{3}|57P0[123]|53300",
    ].join("|") +
    ")$",
);
