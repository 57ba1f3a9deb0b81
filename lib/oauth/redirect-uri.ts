/**
 * Whether `requested` is one of the client's registered redirect URIs: exact string equality
 * (RFC 9700 §4.1.3), with the one exception RFC 8252 §7.3 requires: a loopback IP redirect URI
 * (`http://127.0.0.1…` or `http://[::1]…`) matches with any port, since a native app listens on
 * whatever port the system gives it at the time of the request. Everything else about it (the
 * scheme, the address, the path and query) must still be exactly as registered. `localhost` is
 * not an IP literal: RFC 8252 §8.3 advises against it, and it keeps exact matching.
 */
export function isRegisteredRedirectUri(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const portless = withoutLoopbackPort(requested);
  return portless !== null && registered.some((uri) => withoutLoopbackPort(uri) === portless);
}

// The authority of a loopback IP URI, with its port if any, up to where the path, query or end begins.
const LOOPBACK_IP = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::\d{1,5})?(?=[/?]|$)/;

/** A loopback IP URI without its port (string surgery, no normalisation), or null for any other URI. */
function withoutLoopbackPort(uri: string): string | null {
  return LOOPBACK_IP.test(uri) ? uri.replace(LOOPBACK_IP, "http://$1") : null;
}
