import { IncomingMessage, type IncomingHttpHeaders } from "node:http";
import { MAX_BODY_BYTES } from "@/lib/http/body";
import { isMultipart, type Refusal } from "./request-screen";

/**
 * Next decodes the body of a server action itself, before the action (and its session and CSRF
 * checks) runs, for any page and without a session, and answers much of what React's reply
 * decoder throws on with a 500 and a logged stack: a body that is not multipart, rows that are
 * not JSON, references to rows that are missing, out of order or of the wrong kind, tags React
 * refuses, lists too long or too deep to apply. Torii's server actions (the console's) all take
 * the same two arguments, the form's previous state and the form (`useActionState`), so the
 * server accepts exactly that shape and refuses anything else with 400 before Next sees it:
 *
 * - a fetch action (`Next-Action`, what a page's script sends): a multipart body whose one row
 *   `0` is `[state, "$K<n>"]` and whose other fields are the form's (`_<n>_<name>`);
 * - a form posted without JavaScript: the form's fields, one action (`$ACTION_REF_<p>` with its
 *   descriptor row `{"id", "bound": "$@<n>"}` and the bound `[state]`, or `$ACTION_ID_<id>`) and
 *   `$ACTION_KEY`.
 *
 * A state is plain JSON (what `ActionState` is); a string in it that React would read as a
 * reference (`$…`) is refused, except the escaped `$$…` and `$undefined`. The body is read with
 * the usual 1 MiB limit (413 past it; Next would answer a streamed one with a 500), at most 500
 * parts, and what Next is handed is the form as parsed here, written out again: Next's multipart
 * parser (busboy) and this one (undici's) then cannot read different forms from the same bytes.
 */

/** The console's longest form (the login texts) has about 250 fields. */
const MAX_PARTS = 500;
const MAX_NAME_LENGTH = 1024;
/** Deeper than an `ActionState` (state → values → a field's list → a value) ever is. */
const MAX_STATE_DEPTH = 8;
const MAX_STATE_ARRAY_SLOTS = 100_000;

const NOT_A_FORM: Refusal = { status: 400, message: "A server action's arguments must be a form." };
const MALFORMED_BODY: Refusal = { status: 400, message: "The multipart form data is malformed." };
const TOO_MANY_PARTS: Refusal = { status: 400, message: `The form has more than ${MAX_PARTS} fields.` };
const MALFORMED_ACTION: Refusal = { status: 400, message: "The server action's fields are malformed." };
const TOO_LARGE: Refusal = { status: 413, message: "Request body too large." };

export type ScreenedBody = { refusal: Refusal } | { headers: IncomingHttpHeaders; body: Buffer };

/** The refusal for an action body Torii's actions do not take, or the form to hand Next. */
export async function screenActionBody(headers: IncomingHttpHeaders, body: Buffer): Promise<ScreenedBody> {
  // An action id is hex; Next answers an empty, repeated (joined) or other one with a 4xx but logs
  // it as a bug of its own.
  const action = headers["next-action"];
  if (action !== undefined && (typeof action !== "string" || !/^[0-9a-fA-F]{2,128}$/.test(action))) return { refusal: MALFORMED_ACTION };
  if (!isMultipart(headers)) return { refusal: NOT_A_FORM };
  const boundary = boundaryOf(headers["content-type"]!);
  if (!boundary) return { refusal: MALFORMED_BODY };
  // Counted before parsing: each part costs the parser tens of microseconds.
  if (occurrences(body, `--${boundary}`) > MAX_PARTS + 1) return { refusal: TOO_MANY_PARTS };
  let form: FormData;
  try {
    form = await new Response(new Uint8Array(body), { headers: { "content-type": headers["content-type"]! } }).formData();
  } catch {
    return { refusal: MALFORMED_BODY };
  }
  for (const name of form.keys()) {
    if (name.length > MAX_NAME_LENGTH || /[\u0000-\u001f\u007f]/.test(name)) return { refusal: MALFORMED_BODY };
  }
  const wellFormed = headers["next-action"] !== undefined ? isFetchActionForm(form) : isPostedActionForm(form);
  if (!wellFormed) return { refusal: MALFORMED_ACTION };
  const canonical = new Response(form);
  const bytes = Buffer.from(await canonical.arrayBuffer());
  // Written out again, a form near the limit can grow past Next's (the same 1 MiB) by a few
  // bytes of boundary and part headers: refused here, not by Next with a 500.
  if (bytes.length > MAX_BODY_BYTES) return { refusal: TOO_LARGE };
  const { "transfer-encoding": _, ...rest } = headers;
  return { headers: { ...rest, "content-type": canonical.headers.get("content-type")!, "content-length": String(bytes.length) }, body: bytes };
}

/** The boundary parameter (RFC 2046 5.1.1), when there is exactly one and it is well-formed. */
function boundaryOf(contentType: string): string | null {
  const params = contentType.split(";").slice(1).map((p) => p.trim());
  const given = params.filter((p) => /^boundary=/i.test(p));
  if (given.length !== 1) return null;
  let value = given[0]!.slice("boundary=".length);
  if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
  return /^[0-9A-Za-z'()+_,\-./:=? ]{1,70}$/.test(value) && !value.endsWith(" ") ? value : null;
}

function occurrences(body: Buffer, needle: string): number {
  let n = 0;
  for (let at = body.indexOf(needle); at !== -1; at = body.indexOf(needle, at + needle.length)) n++;
  return n;
}

/** A fetch action's arguments: the one row `0`, `[state, "$K<n>"]`, and the form's fields. */
function isFetchActionForm(form: FormData): boolean {
  const root = form.getAll("0");
  if (root.length !== 1 || typeof root[0] !== "string") return false;
  const args = parseJson(root[0]);
  if (!Array.isArray(args) || args.length !== 2 || !isState(args[0], 0)) return false;
  const ref = typeof args[1] === "string" ? /^\$K([0-9a-f]{1,8})$/.exec(args[1]) : null;
  if (!ref) return false;
  const fields = `_${ref[1]}_`;
  for (const name of form.keys()) if (name !== "0" && !name.startsWith(fields)) return false;
  return true;
}

const ACTION = "$ACTION_";
const ACTION_REF = "$ACTION_REF_";
const ACTION_ID = "$ACTION_ID_";
const ACTION_KEY = "$ACTION_KEY";

/** A form posted without JavaScript: its fields, at most one action, and that action's rows. */
function isPostedActionForm(form: FormData): boolean {
  const actionFields = [...new Set([...form.keys()].filter((k) => k.startsWith(ACTION)))];
  const refs = actionFields.filter((k) => k.startsWith(ACTION_REF));
  const ids = actionFields.filter((k) => k.startsWith(ACTION_ID));
  if (refs.length + ids.length > 1) return false;
  if (form.getAll(ACTION_KEY).some((v) => typeof v !== "string")) return false;
  if (ids.length) return actionFields.every((k) => k === ids[0] || k === ACTION_KEY);
  // No action at all: Next takes it for a plain POST to the page.
  if (!refs.length) return actionFields.every((k) => k === ACTION_KEY);
  const prefix = ACTION + refs[0]!.slice(ACTION_REF.length) + ":";
  const row = onlyRow(form, prefix + "0");
  if (typeof row !== "object" || row === null || Array.isArray(row)) return false;
  const descriptor = row as { id?: unknown; bound?: unknown };
  if (typeof descriptor.id !== "string") return false;
  const rows = [prefix + "0"];
  if (descriptor.bound !== null) {
    const ref = typeof descriptor.bound === "string" ? /^\$@([0-9a-f]{1,8})$/.exec(descriptor.bound) : null;
    if (!ref) return false;
    const boundRow = prefix + String(parseInt(ref[1]!, 16));
    const bound = onlyRow(form, boundRow);
    if (!Array.isArray(bound) || bound.length !== 1 || !isState(bound[0], 0)) return false;
    rows.push(boundRow);
  }
  return actionFields.every((k) => k === refs[0] || k === ACTION_KEY || rows.includes(k));
}

/** The JSON of the one field named `name`, or undefined when there is not exactly one. */
function onlyRow(form: FormData, name: string): unknown {
  const values = form.getAll(name);
  return values.length === 1 && typeof values[0] === "string" ? parseJson(values[0]) : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A form's state as the browser sends it back: plain JSON, no string React would read as a
 * reference or a tag, no deeper than an `ActionState`, and far below React's limit on the size
 * of arrays (it counts their items and the characters of the strings in them).
 */
function isState(v: unknown, depth: number, slots = { left: MAX_STATE_ARRAY_SLOTS }): boolean {
  if (depth > MAX_STATE_DEPTH) return false;
  if (v === null || typeof v === "number" || typeof v === "boolean") return true;
  if (typeof v === "string") return !v.startsWith("$") || v.startsWith("$$") || v === "$undefined";
  if (typeof v !== "object") return false;
  if (Array.isArray(v)) {
    slots.left -= v.length + v.reduce((n: number, item) => n + (typeof item === "string" ? item.length : 0), 0);
    if (slots.left < 0) return false;
  }
  for (const item of Object.values(v as Record<string, unknown>)) if (!isState(item, depth + 1, slots)) return false;
  return true;
}

/**
 * A request that reads as `req` did, with `headers` and `body` in place of its own: what Next is
 * handed once the server has read the original. It shares the connection, so Next still answers
 * on it.
 */
export function replayedRequest(req: IncomingMessage, form: { headers: IncomingHttpHeaders; body: Buffer }): IncomingMessage {
  const replay = new IncomingMessage(req.socket);
  replay.method = req.method;
  replay.url = req.url;
  replay.headers = form.headers;
  replay.rawHeaders = Object.entries(form.headers).flatMap(([k, v]) => (v === undefined ? [] : Array.isArray(v) ? v.flatMap((x) => [k, x]) : [k, v]));
  replay.httpVersion = req.httpVersion;
  replay.httpVersionMajor = req.httpVersionMajor;
  replay.httpVersionMinor = req.httpVersionMinor;
  replay.push(form.body);
  replay.push(null);
  // Its whole body is here: nothing is left to wait for, and ending it early aborts nothing.
  replay.complete = true;
  return replay;
}
