import { IncomingMessage, type IncomingHttpHeaders } from "node:http";
import type { Refusal } from "./request-screen";

/**
 * Next decodes the body of a server action itself (a fetch action's arguments, or a form posted
 * without JavaScript), and answers what it cannot decode with a 500 and a logged stack: a body
 * that is not multipart at all, one streamed past its 1 MB limit without a Content-Length (it
 * declares no length the first screen could refuse), and arguments React's reply decoder throws
 * on. So the server reads such a body first (the same 1 MB limit: 413 past it), checks it as Next
 * and React would read it, refuses what would fail with 400, and hands Next the same bytes again.
 * What the arguments mean is left to the action, which checks its session, CSRF token and input.
 */

/** Bodies Next decodes as a server action's: every multipart POST, and any POST naming an action. */
export function isActionBody(method: string, headers: IncomingHttpHeaders): boolean {
  if (method !== "POST") return false;
  return isMultipart(headers) || headers["next-action"] !== undefined;
}

const isMultipart = (headers: IncomingHttpHeaders) => (headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase() === "multipart/form-data";

const MALFORMED_BODY: Refusal = { status: 400, message: "The multipart form data is malformed." };
const MALFORMED_ACTION: Refusal = { status: 400, message: "The server action's fields are malformed." };

/** The refusal for an action body Next would fail on, or null when Next can read it. */
export async function screenActionBody(headers: IncomingHttpHeaders, body: Buffer): Promise<Refusal | null> {
  const fetchAction = headers["next-action"] !== undefined;
  if (!isMultipart(headers)) {
    // A fetch action's arguments as one JSON text: the reply's root row, alone.
    let root: unknown;
    try {
      root = JSON.parse(body.toString("utf8"));
    } catch {
      return MALFORMED_ACTION;
    }
    return Array.isArray(root) && referencesResolve(new Map([["0", root]])) ? null : MALFORMED_ACTION;
  }
  let form: FormData;
  try {
    // The parser Next uses for a form posted without JavaScript (undici's).
    form = await new Response(new Uint8Array(body), { headers: { "content-type": headers["content-type"]! } }).formData();
  } catch {
    return MALFORMED_BODY;
  }
  return (fetchAction ? malformedArguments(form) : malformedFormAction(form)) ? MALFORMED_ACTION : null;
}

/** A fetch action's multipart arguments: rows keyed by their number, the root (0) an array. */
function malformedArguments(form: FormData): boolean {
  const rows = replyRows(form, "");
  return rows === null || !Array.isArray(rows.get("0")) || !referencesResolve(rows);
}

const ACTION = "$ACTION_";
const ACTION_REF = "$ACTION_REF_";
const MAX_ACTION_REFS = 2;

/**
 * A form bound to a server action names it by `$ACTION_REF_<p>`; its descriptor
 * (`$ACTION_<p>:0`, `{"id": …, "bound": …}`) and the bound arguments (`$ACTION_<p>:<n>`) are rows
 * of the reply, and `bound` is null or a reference (`$@<hex>`) to the row of the arguments. Next
 * checks only that the id is one of its actions before React decodes the rest.
 */
function malformedFormAction(form: FormData): boolean {
  const refs = [...form.keys()].filter((key) => key.startsWith(ACTION_REF));
  // Next refuses a form naming more than two actions itself; each is checked over the whole form.
  if (refs.length > MAX_ACTION_REFS) return true;
  for (const key of refs) {
    const rows = replyRows(form, ACTION + key.slice(ACTION_REF.length) + ":");
    if (rows === null || !referencesResolve(rows)) return true;
    const descriptor = rows.get("0");
    if (typeof descriptor !== "object" || descriptor === null || Array.isArray(descriptor)) return true;
    const { id, bound } = descriptor as { id?: unknown; bound?: unknown };
    if (typeof id !== "string") return true;
    if (bound === null || bound === undefined) continue;
    if (typeof bound !== "string" || !bound.startsWith("$@")) return true;
    if (!Array.isArray(rows.get(String(parseInt(bound.slice(2), 16))))) return true;
  }
  return false;
}

/** A file stands for a row React reads as a blob. */
const BLOB = Symbol("blob");

/**
 * The rows of a reply under `prefix`: each field named `<prefix><n>` holds row n, as JSON (a file
 * is a blob row). Null when a row is not JSON: React parses every row it reaches. Fields with
 * other names (`<prefix><n>_<name>`, a form passed as an argument) are values, not rows.
 */
function replyRows(form: FormData, prefix: string): Map<string, unknown> | null {
  const rows = new Map<string, unknown>();
  for (const [name, value] of form) {
    if (!name.startsWith(prefix) || !/^\d+$/.test(name.slice(prefix.length))) continue;
    if (typeof value !== "string") { rows.set(name.slice(prefix.length), BLOB); continue; }
    try {
      rows.set(name.slice(prefix.length), JSON.parse(value));
    } catch {
      return null;
    }
  }
  return rows;
}

/**
 * Whether every reference to another row names a row that is there: React's decoder fails with
 * "Connection closed" on one that is not. Only the forms that name a row are checked (`$@`
 * promise, `$h` server reference, `$Q` map, `$W` set, `$i` iterator, `$<hex>` model, each
 * `<hex>` optionally followed by `:path`); every other `$` form is left to React.
 */
function referencesResolve(rows: Map<string, unknown>): boolean {
  const pending: unknown[] = [...rows.values()];
  while (pending.length) {
    const v = pending.pop();
    if (typeof v === "string") {
      const m = /^\$(?:[@hQWi])?([0-9a-f]+)(?::|$)/.exec(v);
      if (m && !rows.has(String(parseInt(m[1]!, 16)))) return false;
    } else if (typeof v === "object" && v !== null) {
      // One at a time: spreading a list of a few hundred thousand would overflow the call stack.
      for (const item of Object.values(v as Record<string, unknown>)) pending.push(item);
    }
  }
  return true;
}

/**
 * A request that reads as `req` did, with `body` as its body: what Next is handed once the
 * server has read the original. It shares the connection, so Next still answers on it.
 */
export function replayedRequest(req: IncomingMessage, body: Buffer): IncomingMessage {
  const replay = new IncomingMessage(req.socket);
  replay.method = req.method;
  replay.url = req.url;
  replay.headers = req.headers;
  replay.rawHeaders = req.rawHeaders;
  replay.httpVersion = req.httpVersion;
  replay.httpVersionMajor = req.httpVersionMajor;
  replay.httpVersionMinor = req.httpVersionMinor;
  replay.push(body);
  replay.push(null);
  // Its whole body is here: nothing is left to wait for, and ending it early aborts nothing.
  replay.complete = true;
  return replay;
}
