import type { User } from "@/lib/store/users";
import { loginNameOf } from "@/lib/users/fields";

/** The claims each scope releases (OpenID Connect Core 5.4). */
const SCOPE_CLAIMS: Record<string, readonly string[]> = {
  profile: ["name", "given_name", "family_name", "nickname", "preferred_username", "locale", "updated_at"],
  email: ["email", "email_verified"],
  phone: ["phone_number", "phone_number_verified"],
  address: ["address"],
};

/**
 * Standard claims (OpenID Connect Core 5.4) released for the granted scopes, plus those asked
 * for by name with the `claims` request parameter (Core 5.5, lib/oauth/claims-request.ts).
 * Userinfo, introspection and ID tokens all use this, so a scope means the same claims
 * everywhere. Empty values are left out rather than sent as null.
 */
export function claimsForScopes(user: User, scopes: readonly string[], primaryDomain: string, requested: readonly string[] = []): Record<string, unknown> {
  const names = new Set(requested);
  for (const s of scopes) for (const n of SCOPE_CLAIMS[s] ?? []) names.add(n);
  const all = userClaims(user, primaryDomain);
  return Object.fromEntries(Object.entries(all).filter(([k]) => names.has(k)));
}

/** Every standard claim the user has a value for. */
function userClaims(user: User, primaryDomain: string): Record<string, unknown> {
  const c: Record<string, unknown> = {};
  const set = (k: string, v: unknown) => {
    if (v !== null && v !== undefined && v !== "") c[k] = v;
  };
  const full = [user.givenName, user.familyName].filter(Boolean).join(" ");
  set("name", user.name || full || user.username);
  set("given_name", user.givenName);
  set("family_name", user.familyName);
  set("nickname", user.nickname);
  set("preferred_username", loginNameOf(user, primaryDomain));
  set("locale", user.locale);
  c.updated_at = Math.floor(user.updatedAt.getTime() / 1000);
  if (user.email) {
    c.email = user.email;
    c.email_verified = user.emailVerified;
  }
  if (user.phone) {
    c.phone_number = user.phone;
    c.phone_number_verified = user.phoneVerified;
  }
  if (user.address) {
    const a = user.address;
    const address: Record<string, string> = {};
    const put = (k: string, v: string | null | undefined) => {
      if (v) address[k] = v;
    };
    put("street_address", a.streetAddress);
    put("locality", a.locality);
    put("region", a.region);
    put("postal_code", a.postalCode);
    put("country", a.country);
    const formatted = [a.streetAddress, [a.postalCode, a.locality].filter(Boolean).join(" "), a.region, a.country]
      .filter(Boolean)
      .join("\n");
    put("formatted", formatted);
    if (Object.keys(address).length) c.address = address;
  }
  return c;
}

/** Every user claim claimsForScopes can release (for `claims_supported` and the claims parameter). */
export const USER_CLAIMS = [
  "name",
  "given_name",
  "family_name",
  "nickname",
  "preferred_username",
  "locale",
  "updated_at",
  "email",
  "email_verified",
  "phone_number",
  "phone_number_verified",
  "address",
] as const;
