import net from "node:net";
import type { HttpRequest } from "@/lib/http/request";

/**
 * The header through which the server entry passes the peer address to handlers. server.ts
 * always overwrites it, so a client cannot choose its own address by sending it.
 */
export const CLIENT_ADDRESS_HEADER = "x-torii-client-address";

export function clientAddress(request: HttpRequest): string {
  return request.headers.get(CLIENT_ADDRESS_HEADER) ?? "unknown";
}

/**
 * The client address as rate limits and login throttles count it: an IPv4 address as it is, an
 * IPv6 address as its /64 network (`2001:db8:1:2::/64`). One IPv6 subscriber usually holds a
 * whole /64 (RFC 6177; a host picks its own interface identifier, and privacy addresses change
 * it daily, RFC 8981), so counting each address would give one client 2^64 fresh budgets simply
 * by changing the lower half. Audit events keep the whole address.
 */
export function addressForLimits(address: string): string {
  if (net.isIP(address) !== 6) return address;
  const [head = "", tail] = address.split("%")[0]!.split("::");
  const groups = (part: string | undefined) => (part ? part.split(":") : []);
  const left = groups(head);
  // Only the first four groups matter, and a `::` stands for the zeros between what it separates
  // (an embedded IPv4 address is in the last 32 bits, beyond them).
  const right = groups(tail).flatMap((g) => (g.includes(".") ? ["0", "0"] : [g]));
  const full = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${full.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(":")}::/64`;
}

/** One entry of `IDP_TRUSTED_PROXIES`: an address or a CIDR block, IPv4 or IPv6. */
type Block = { address: string; prefix: number; family: "ipv4" | "ipv6" };

function parseBlock(entry: string): Block | null {
  const [address = "", prefixText, ...rest] = entry.split("/");
  if (rest.length) return null;
  const version = net.isIP(address);
  if (!version) return null;
  const max = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) return null;
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

/**
 * Validates `IDP_TRUSTED_PROXIES` (comma-separated addresses or CIDRs, e.g. `10.0.0.0/8,::1`):
 * the entries, or the first entry that is neither.
 */
export function parseTrustedProxies(value: string): { entries: string[] } | { invalid: string } {
  const entries = value
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  for (const e of entries) if (!parseBlock(e)) return { invalid: e };
  return { entries };
}

/** The set of trusted proxies, built once per server from the validated configuration entries. */
export function trustedProxyList(entries: readonly string[]): net.BlockList {
  const list = new net.BlockList();
  for (const e of entries) {
    const b = parseBlock(e);
    if (b) list.addSubnet(b.address, b.prefix, b.family);
  }
  return list;
}

/** `::ffff:10.0.0.1` is the IPv4 peer 10.0.0.1; a forwarded `[::1]:443` or `10.0.0.1:443` loses its port. */
function normalize(raw: string): string | null {
  let a = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(a);
  if (bracketed) a = bracketed[1]!;
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(a)) a = a.slice(0, a.lastIndexOf(":"));
  a = a.replace(/^::ffff:(?=\d{1,3}(\.\d{1,3}){3}$)/i, "");
  return net.isIP(a) ? a.toLowerCase() : null;
}

function isTrusted(list: net.BlockList, address: string): boolean {
  return list.check(address, net.isIP(address) === 6 ? "ipv6" : "ipv4");
}

/**
 * The client's address: the socket peer, unless that is a trusted proxy; then the rightmost
 * `X-Forwarded-For` address that is not a trusted proxy. Entries left of it were written by
 * whoever sent the request and prove nothing, so they are never read. If every hop is trusted,
 * the leftmost one is the client. An entry that is not an address ends the walk at the last
 * trusted hop.
 */
export function resolveClientAddress(socketAddress: string | undefined, forwardedFor: string | undefined, trusted: net.BlockList): string {
  const peer = normalize(socketAddress ?? "");
  if (!peer) return "unknown";
  if (!isTrusted(trusted, peer) || !forwardedFor) return peer;
  let current = peer;
  const hops = forwardedFor.split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalize(hops[i]!);
    if (!hop) return current;
    current = hop;
    if (!isTrusted(trusted, hop)) return hop;
  }
  return current;
}

/** A connection as far as its address goes (a `net.Socket`). */
type Connection = { readonly remoteAddress?: string | undefined };

const resolvedBySocket = new WeakMap<object, { forwardedFor: string | undefined; address: string }>();

/**
 * `resolveClientAddress` for a request on `socket`, remembered per connection: a connection's
 * peer never changes, and a keep-alive client sends many requests on one (an address check
 * builds native objects, a few per cent of a small request). Resolved again when the request's
 * `X-Forwarded-For` differs from the previous one's.
 */
export function connectionClientAddress(socket: Connection, forwardedFor: string | undefined, trusted: net.BlockList): string {
  const last = resolvedBySocket.get(socket);
  if (last && last.forwardedFor === forwardedFor) return last.address;
  const address = resolveClientAddress(socket.remoteAddress, forwardedFor, trusted);
  resolvedBySocket.set(socket, { forwardedFor, address });
  return address;
}
