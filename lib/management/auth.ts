import type { Executor } from "@/lib/db/client";
import { userForPat } from "@/lib/store/pats";
import type { User } from "@/lib/store/users";
import { ApiError } from "./http";
import type { HttpRequest } from "@/lib/http/request";

/** Holds the admin role and is not locked: what both the management API and the console require. */
export function isActiveAdmin(user: Pick<User, "roles" | "locked">): boolean {
  return user.roles.includes("admin") && !user.locked;
}

const unauthorized = (message: string, challenge: string) =>
  new ApiError(401, "unauthorized", message, undefined, { "WWW-Authenticate": challenge });

/** The administrator behind `Authorization: Bearer <PAT>`; 401 without a valid PAT, 403 for a non-admin. */
export async function authenticateAdmin(request: HttpRequest, db: Executor, now: Date): Promise<User> {
  const header = request.headers.get("authorization");
  if (!header) throw unauthorized("A personal access token is required: Authorization: Bearer <token>.", 'Bearer realm="management"');
  const m = /^Bearer +([\x21-\x7e]+) *$/i.exec(header);
  if (!m) {
    throw unauthorized("Use Authorization: Bearer <personal access token>.", 'Bearer realm="management", error="invalid_request"');
  }
  const row = await userForPat(db, m[1]!, now);
  if (!row) {
    throw unauthorized("The token is unknown, expired, or its user is locked.", 'Bearer realm="management", error="invalid_token"');
  }
  if (!isActiveAdmin(row.user)) {
    // RFC 6750 §3.1: a valid token that does not give access says so in its challenge too.
    throw new ApiError(403, "forbidden", "The management API needs a token of a user with the admin role.", undefined, {
      "WWW-Authenticate": 'Bearer realm="management", error="insufficient_scope", error_description="The token\'s user does not have the admin role."',
    });
  }
  return row.user;
}
