// Small HTTP helpers shared by the harness: a cookie jar, Basic credentials, PKCE.
import { createHash } from "node:crypto";

/** RFC 6749 2.3.1: each part form-urlencoded, then `id:secret` in Base64. */
export function basic(id, secret) {
  const enc = (v) => encodeURIComponent(v).replace(/%20/g, "+");
  return "Basic " + Buffer.from(`${enc(id)}:${enc(secret)}`).toString("base64");
}

export const FORM = "application/x-www-form-urlencoded";

/** One fixed PKCE pair: the server still hashes the verifier on every exchange. */
export const PKCE_VERIFIER = "bench-verifier-" + "x".repeat(43);
export const PKCE_CHALLENGE = createHash("sha256").update(PKCE_VERIFIER).digest("base64url");

/** Case-insensitive header read on the plain objects autocannon hands out. */
export function headerOf(headers, name) {
  for (const k of Object.keys(headers ?? {})) if (k.toLowerCase() === name) return headers[k];
  return undefined;
}

/** A browser without a browser: follows nothing by itself, keeps cookies per origin-less jar. */
export class CookieJar {
  cookies = new Map();

  store(res) {
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(";");
      const i = pair.indexOf("=");
      const name = pair.slice(0, i).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(i + 1).trim());
    }
    return res;
  }

  header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  async fetch(url, init = {}) {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set("cookie", this.header());
    return this.store(await fetch(url, { ...init, headers, redirect: "manual" }));
  }
}

/** The code in a redirect to the client, or an error naming what came instead. */
export function codeFrom(location, redirectUri) {
  if (!location || !location.startsWith(redirectUri)) throw new Error(`expected a redirect to the client, got ${location}`);
  const u = new URL(location);
  const code = u.searchParams.get("code");
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}

export async function json(res, what) {
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${what}: ${res.status}, not JSON: ${text.slice(0, 200)}`);
  }
  if (!res.ok) throw new Error(`${what}: ${res.status} ${text.slice(0, 300)}`);
  return body;
}
