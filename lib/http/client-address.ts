/**
 * The header through which the server entry passes the peer address to handlers. server.ts
 * always overwrites it, so a client cannot choose its own address by sending it.
 */
export const CLIENT_ADDRESS_HEADER = "x-torii-client-address";

export function clientAddress(request: Request): string {
  return request.headers.get(CLIENT_ADDRESS_HEADER) ?? "unknown";
}

/** The address to trust: the socket peer, or the first X-Forwarded-For hop when behind a trusted proxy. */
export function resolveClientAddress(socketAddress: string | undefined, forwardedFor: string | undefined, trustProxy: boolean): string {
  if (trustProxy && forwardedFor) {
    const first = forwardedFor.split(",")[0]?.trim();
    if (first) return first;
  }
  return (socketAddress ?? "unknown").replace(/^::ffff:/, "");
}
