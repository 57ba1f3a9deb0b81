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
