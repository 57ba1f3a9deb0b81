import { IncomingMessage, type IncomingHttpHeaders } from "node:http";
import type { Refusal } from "./request-screen";

/**
 * Next parses a multipart body itself (a server action's form, or a form posted without
 * JavaScript), and answers what it cannot parse with a 500 and a logged stack: a body that is not
 * multipart at all, one streamed past its 1 MB limit without a Content-Length (it declares no
 * length the first screen could refuse), and a form whose server-action fields React cannot decode.
 * So the server reads such a body first (the same 1 MB limit: 413 past it), parses it as Next
 * would, refuses what would fail with 400, and hands Next the same bytes again.
 */

export function isMultipartPost(method: string, headers: IncomingHttpHeaders): boolean {
  if (method !== "POST") return false;
  return (headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase() === "multipart/form-data";
}

const MALFORMED_BODY: Refusal = { status: 400, message: "The multipart form data is malformed." };
const MALFORMED_ACTION: Refusal = { status: 400, message: "The form's server action fields are malformed." };

/** The refusal for a multipart body Next would fail on, or null when Next can read it. */
export async function screenMultipartBody(contentType: string, body: Buffer): Promise<Refusal | null> {
  let form: FormData;
  try {
    // The parser Next uses for a form posted without JavaScript (undici's).
    form = await new Response(new Uint8Array(body), { headers: { "content-type": contentType } }).formData();
  } catch {
    return MALFORMED_BODY;
  }
  return malformedActionFields(form) ? MALFORMED_ACTION : null;
}

const ACTION = "$ACTION_";
const ACTION_REF = "$ACTION_REF_";

/**
 * A form bound to a server action names it by `$ACTION_REF_<p>`; its descriptor
 * (`$ACTION_<p>:0`, `{"id": …, "bound": …}`) and the bound arguments (`$ACTION_<p>:<n>`) are rows
 * of React's reply format, each JSON, and `bound` is null or a reference (`$@<hex>`) to one of
 * them. React throws on a row that is not JSON or a reference to a row that is missing, after
 * Next has checked only that the id is one of its actions. What a row holds beyond that is the
 * action's argument, which the action itself checks (its session, its CSRF token, its input).
 */
function malformedActionFields(form: FormData): boolean {
  for (const key of form.keys()) {
    if (!key.startsWith(ACTION_REF)) continue;
    const prefix = ACTION + key.slice(ACTION_REF.length) + ":";
    const rows = new Map<string, unknown>();
    for (const [name, value] of form) {
      if (!name.startsWith(prefix)) continue;
      if (typeof value !== "string") return true;
      try {
        rows.set(name.slice(prefix.length), JSON.parse(value));
      } catch {
        return true;
      }
    }
    const descriptor = rows.get("0");
    if (typeof descriptor !== "object" || descriptor === null || Array.isArray(descriptor)) return true;
    const { id, bound } = descriptor as { id?: unknown; bound?: unknown };
    if (typeof id !== "string") return true;
    if (bound === null || bound === undefined) continue;
    if (typeof bound !== "string" || !/^\$@[0-9a-f]+$/.test(bound)) return true;
    const row = rows.get(String(parseInt(bound.slice(2), 16)));
    if (!Array.isArray(row)) return true;
  }
  return false;
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
