import { dateOf } from "@torii/core/clock";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import { torii } from "@torii/core/runtime";
import { CLIENT_ADDRESS_HEADER } from "@torii/core/http/client-address";
import { dispatchManagement } from "@torii/core/management/router";
import { operation, type ManagementOperations, type OperationId } from "@torii/core/management/api-routes";
import { userAgentCookieName } from "@torii/core/session/user-agent";
import type { User } from "@torii/core/store/users";
import { touchSession } from "@torii/core/store/sessions";
import { getSettings } from "@torii/core/store/settings";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { CONSOLE_COOKIE, consoleAccess, verifyConsoleCsrf, type ConsoleAccess } from "@torii/core/console/session";
import type { FieldProblem, FormBody } from "@torii/core/console/forms";

/** The console access of this request (memoised per request: layout, page and actions share it). */
export const currentAccess = cache(async (): Promise<ConsoleAccess> => {
  const inst = await torii();
  const jar = await cookies();
  return consoleAccess(inst, {
    console: jar.get(CONSOLE_COOKIE)?.value,
    userAgent: jar.get(userAgentCookieName(inst.config.issuer))?.value,
  });
});

export type Admin = Extract<ConsoleAccess, { status: "admin" }>;

/**
 * Every console page calls this itself (not only the layout: Next re-renders just the page on
 * client navigation). Without a console session the browser goes to sign in; a signed-in
 * non-administrator gets the "not allowed" page and nothing else.
 */
export async function requireAdmin(returnTo: string = CONSOLE_PATH): Promise<Admin> {
  const access = await currentAccess();
  if (access.status === "none") redirect(`${CONSOLE_PATH}/signin?returnTo=${encodeURIComponent(returnTo)}`);
  if (access.status === "denied") redirect(`${CONSOLE_PATH}/not-allowed`);
  // Working in the console is activity in the login session behind it: its idle expiry moves on.
  await touchConsoleSession(access.sid);
  return access;
}

const touchConsoleSession = cache(async (sid: string) => {
  const inst = await torii();
  await touchSession(inst.db, sid, (await getSettings(inst)).lifetimes, dateOf(inst.clock));
});

export class ConsoleForbidden extends Error {}

/**
 * The administrator behind a console action (a POST): a live console session of an admin and the
 * form's CSRF token. Anything else is refused before any data is read or changed.
 */
export async function actionAdmin(form: FormData): Promise<Admin> {
  const access = await currentAccess();
  const inst = await torii();
  if (access.status !== "admin" || !verifyConsoleCsrf(inst.masterKey, access.userAgentId, access.sid, form.get("csrf"))) {
    throw new ConsoleForbidden("not allowed");
  }
  return access;
}

/** A management API error's body (lib/management/http.ts ApiError.toJSON). */
type ApiErrorBody = { error: string; message: string; fields?: FieldProblem[] };

export type ApiResult<T = Record<string, unknown>> =
  | { ok: true; status: number; data: T }
  | { ok: false; status: number; error: string; message: string; fields: FieldProblem[] };

type Operation<O extends OperationId> = ManagementOperations[O];

/** What a call sends: its path parameters (required when the path has any), its body and query, typed by the operation's schemas. */
type CallInput<O extends OperationId> = ([Operation<O>["params"]] extends [never]
  ? { params?: undefined }
  : { params: Record<Operation<O>["params"], string> }) & {
  /** The operation's body, or a form's fields as the administrator typed them, for the API to validate (lib/console/forms.ts FormBody). */
  body?: Operation<O>["body"] | FormBody<O>;
  query?: Operation<O>["query"];
};

type CallArgs<O extends OperationId> = [Operation<O>["params"]] extends [never] ? [input?: CallInput<O>] : [input: CallInput<O>];

/**
 * A management API operation, called by its operationId as this administrator: through the API's
 * own route table, schemas and audit events (lib/management/router.ts dispatchManagement), with
 * the request and response typed from the route's zod schemas (lib/management/api-routes.ts), so
 * the console and the API cannot disagree on a shape. The browser's address and user agent go
 * along so that audit events name where the change came from.
 */
export async function call<O extends OperationId>(user: User, op: O, ...[input]: CallArgs<O>): Promise<ApiResult<Operation<O>["response"]>> {
  const { method, path } = operation(op);
  const params = (input?.params ?? {}) as Record<string, string>;
  let url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
  const query = new URLSearchParams();
  // Query values are strings, numbers or booleans (the query schemas coerce them back).
  for (const [k, v] of Object.entries((input?.query ?? {}) as Record<string, string | number | boolean | undefined>)) {
    if (v !== undefined) query.set(k, String(v));
  }
  if (query.size) url += `?${query.toString()}`;
  return send(user, method, url, input?.body);
}

async function send<T>(user: User, method: string, path: string, body: unknown): Promise<ApiResult<T>> {
  const inst = await torii();
  const h = await headers();
  const req = new Request(`${inst.config.issuer}/management/v1${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      "user-agent": h.get("user-agent") ?? "",
      [CLIENT_ADDRESS_HEADER]: h.get(CLIENT_ADDRESS_HEADER) ?? "unknown",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const res = await dispatchManagement(inst, req, user);
  // The router answers every request with JSON (ApiError.toJSON for failures), except 204.
  if (res.ok) return { ok: true, status: res.status, data: (res.status === 204 ? {} : await res.json()) as T };
  const data = (await res.json()) as ApiErrorBody;
  return { ok: false, status: res.status, error: data.error, message: data.message, fields: data.fields ?? [] };
}

/** A read for a page: null for 404; any other failure is an error for the error boundary. */
export async function read<O extends OperationId>(user: User, op: O, ...args: CallArgs<O>): Promise<Operation<O>["response"] | null> {
  const r = await call(user, op, ...args);
  if (r.ok) return r.data;
  if (r.status === 404) return null;
  throw new Error(`${op}: ${r.status} ${r.message}`);
}
