/**
 * What one executed statement sent back, read straight from PostgreSQL's wire bytes: its rows as
 * the text of each column (null for NULL), and its command tag ("INSERT 0 1"; null for an empty
 * statement).
 */
export type Answer = { rows: (string | null)[][]; tag: string | null };

// Backend message types (PostgreSQL protocol, "Message Formats").
const DATA_ROW = 0x44; // D
const COMMAND_COMPLETE = 0x43; // C
const EMPTY_QUERY = 0x49; // I
const ERROR_RESPONSE = 0x45; // E

/**
 * The answers of the statements an exchange of Bind and Execute messages ran, in order, or
 * undefined when PostgreSQL answered with an error (the caller then runs the exchange again
 * through PGlite's own reader, which turns the error into PGlite's DatabaseError).
 *
 * PGlite's own reader copies each column's bytes into a new ArrayBuffer before decoding it, which
 * on the grant path was a twentieth of the CPU; here each column is decoded in place. Every other
 * message (ParseComplete, BindComplete, NoData, notices, ReadyForQuery) carries nothing a
 * statement's result needs, and is skipped. Notifications are skipped too: Torii never LISTENs on
 * PGlite (invalidations go through NOTIFY on PostgreSQL only, lib/store/invalidation.ts).
 */
export function readAnswers(wire: Buffer): Answer[] | undefined {
  const answers: Answer[] = [];
  let rows: (string | null)[][] = [];
  let at = 0;
  while (at + 5 <= wire.length) {
    const type = wire[at]!;
    // The length counts itself, not the type byte.
    const end = at + 1 + wire.readInt32BE(at + 1);
    const body = at + 5;
    if (type === DATA_ROW) {
      const count = wire.readInt16BE(body);
      const values = new Array<string | null>(count);
      let p = body + 2;
      for (let i = 0; i < count; i++) {
        const length = wire.readInt32BE(p);
        p += 4;
        if (length < 0) values[i] = null;
        else {
          values[i] = wire.toString("utf8", p, p + length);
          p += length;
        }
      }
      rows.push(values);
    } else if (type === COMMAND_COMPLETE) {
      answers.push({ rows, tag: wire.toString("utf8", body, end - 1) }); // without the closing NUL
      rows = [];
    } else if (type === EMPTY_QUERY) {
      answers.push({ rows, tag: null });
      rows = [];
    } else if (type === ERROR_RESPONSE) {
      return undefined;
    }
    at = end;
  }
  return answers;
}

/** Command tags that end in the number of rows the statement changed (PGlite counts these the same way). */
const CHANGING = new Set(["INSERT", "UPDATE", "DELETE", "COPY", "MERGE"]);

type Field = { name: string; dataTypeID: number };
export type Parser = (value: string, typeId: number) => unknown;

/**
 * The result PGlite's `query()` would give for `answer`: rows parsed by type (objects by column
 * name, or arrays), the fields, the command, its row count and the rows it changed.
 */
export function resultOfAnswer(
  answer: Answer,
  fields: Field[],
  parserFor: (typeId: number) => Parser | undefined,
  rowMode: "array" | "object" | undefined,
): { rows: unknown[]; fields: Field[]; affectedRows: number; command?: string; rowCount?: number } {
  if (answer.tag === null) return { rows: [], fields: [], affectedRows: 0 };
  const parse = (value: string | null, i: number): unknown => {
    if (value === null) return null;
    const type = fields[i]!.dataTypeID;
    const parser = parserFor(type);
    return parser ? parser(value, type) : value;
  };
  const rows = answer.rows.map((values) => {
    if (rowMode === "array") return values.map(parse);
    const row: Record<string, unknown> = {};
    for (let i = 0; i < values.length; i++) row[fields[i]!.name] = parse(values[i]!, i);
    return row;
  });
  const parts = answer.tag.split(" ");
  const command = parts[0]!;
  const rowCount = parseInt(parts[parts.length - 1]!, 10);
  return {
    rows,
    fields,
    command,
    affectedRows: CHANGING.has(command) ? rowCount : 0,
    ...(Number.isNaN(rowCount) ? {} : { rowCount }),
  };
}

// Frontend message types.
const BIND = 0x42; // B
const EXECUTE = 0x45; // E
const SYNC = 0x53; // S

/**
 * Bind and Execute of the prepared statement `statement` with text `values` (null for NULL), on
 * the unnamed portal, results in text, followed by a Sync when `sync`: one buffer of its own, so
 * that it can be moved to the database thread.
 *
 * PGlite's serializer writes the same messages through a growing writer, a DataView call per
 * field; the statements of a code flow spent a tenth of the server thread there. This one
 * measures the message first and writes it once. It sends no parameter format codes (PostgreSQL
 * then reads every parameter as text) where PGlite's sends one text code per parameter: the same.
 */
export function bindAndExecute(statement: string, values: readonly (string | null)[], sync = false): Buffer {
  const lengths = values.map((v) => (v === null ? -1 : Buffer.byteLength(v)));
  const bindLength = 4 + 1 + Buffer.byteLength(statement) + 1 + 2 + 2 + lengths.reduce((n, l) => n + 4 + Math.max(l, 0), 0) + 2;
  const size = 1 + bindLength + 10 + (sync ? 5 : 0);
  // Not from Buffer's shared pool: the buffer's memory is moved to another thread.
  const out = Buffer.allocUnsafeSlow(size);
  let at = 0;
  out[at++] = BIND;
  at = out.writeInt32BE(bindLength, at);
  out[at++] = 0; // the unnamed portal
  at += out.write(statement, at, "utf8");
  out[at++] = 0;
  at = out.writeInt16BE(0, at); // no parameter format codes: all text
  at = out.writeInt16BE(values.length, at);
  values.forEach((v, i) => {
    at = out.writeInt32BE(lengths[i]!, at);
    if (v !== null) at += out.write(v, at, "utf8");
  });
  at = out.writeInt16BE(0, at); // no result format codes: all text
  out[at++] = EXECUTE;
  at = out.writeInt32BE(9, at);
  out[at++] = 0; // the unnamed portal
  at = out.writeInt32BE(0, at); // every row
  if (sync) {
    out[at++] = SYNC;
    out.writeInt32BE(4, at);
  }
  return out;
}
