import type http from "node:http";

/**
 * How long and how many: the Node server's protection against slow or half-sent requests
 * (README, "Limits"). A client that sends headers or a body slower than these, or claims a
 * `Content-Length` it never sends, loses its connection instead of holding it open.
 */
export type ServerLimits = {
  /** Time to receive the complete request headers. */
  headersTimeoutMs: number;
  /** Time to receive the complete request, body included. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open (above a load balancer's 60 s idle timeout). */
  keepAliveTimeoutMs: number;
  /** Open connections at most; further ones are closed at once. */
  maxConnections: number;
};

export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 2048,
};

/** How often Node checks the header and request timeouts; it must be given when the server is created. */
export const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;

export function applyServerLimits(server: http.Server, limits: ServerLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
}
