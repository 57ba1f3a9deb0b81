import { z } from "zod";
import { problem, type Problem } from "@/lib/problem";
import { addProblem } from "./http";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Why a redirect URI cannot be registered (its message completes "Redirect URI ..."), or null when it can. Registered URIs are later
 * compared exactly (string equality), so nothing here normalises them: what is stored is what
 * the client must send.
 *
 * - Absolute and without a fragment (RFC 6749 §3.1.2).
 * - `https` anywhere; plain `http` only on loopback hosts (RFC 8252 §7.3), since anything else
 *   would send codes and tokens over the network in clear.
 * - Private-use schemes of native apps only in reverse-domain form (RFC 8252 §7.1, e.g.
 *   `com.example.app:/callback`): this also keeps out `javascript:`, `data:`, `file:` and the like.
 * - No credentials in the authority and no whitespace, which only ever serve to confuse parsers.
 */
function redirectUriProblem(value: string): Problem | null {
  if (value.length > 2048) return problem("redirect_uri_too_long", "must be at most 2048 characters long");
  if (/[\s\u0000-\u001f\u007f]/.test(value)) return problem("redirect_uri_whitespace", "must not contain whitespace or control characters");
  if (value.includes("#")) return problem("redirect_uri_fragment", "must not contain a fragment (#)");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return problem("redirect_uri_not_absolute", "must be an absolute URI");
  }
  if (url.username || url.password) return problem("redirect_uri_credentials", "must not contain user credentials");
  const scheme = url.protocol.slice(0, -1);
  if (scheme === "https") return url.hostname ? null : problem("redirect_uri_no_host", "must name a host");
  if (scheme === "http") {
    return LOOPBACK_HOSTS.has(url.hostname)
      ? null
      : problem("redirect_uri_http", "may use plain http only for localhost, 127.0.0.1 or [::1]; use https");
  }
  if (scheme.includes(".")) return null;
  return problem(
    "redirect_uri_scheme",
    "must use https, http on a loopback host, or a reverse-domain private-use scheme (e.g. com.example.app:/cb)",
  );
}

export const redirectUri = z.string().superRefine((value, ctx) => {
  const p = redirectUriProblem(value);
  if (p) addProblem(ctx, { ...p, message: `Redirect URI ${p.message}.` });
});

/** A list of redirect URIs; duplicates are dropped since matching is exact anyway. */
export const redirectUriList = z
  .array(redirectUri)
  .max(50)
  .transform((list) => [...new Set(list)]);

/**
 * Why a web origin (CORS, `allowedOrigins`) cannot be registered, or null. An origin is compared
 * exactly with the browser's `Origin` header, which is always `scheme://host[:port]` in lower
 * case without a default port or a trailing slash: anything else could never match, so it is
 * refused rather than stored. No wildcards: each origin is named. Plain http only on loopback
 * hosts, as for redirect URIs.
 */
function webOriginProblem(value: string): Problem | null {
  if (value.includes("*")) return problem("origin_wildcard", "must name one origin; wildcards are not allowed");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return problem("origin_invalid", "must be an origin such as https://app.example.com");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return problem("origin_scheme", "must use https (or http on a loopback host)");
  if (url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname)) return problem("origin_http", "may use plain http only for localhost, 127.0.0.1 or [::1]; use https");
  if (url.origin !== value) return problem("origin_not_exact", `must be exactly scheme://host[:port], without a path or a trailing slash (here: ${url.origin})`, { origin: url.origin });
  return null;
}

export const webOriginList = z
  .array(
    z.string().superRefine((value, ctx) => {
      const p = webOriginProblem(value);
      if (p) addProblem(ctx, { ...p, message: `Origin ${p.message}.` });
    }),
  )
  .max(50)
  .transform((list) => [...new Set(list)]);
