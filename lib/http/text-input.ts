/**
 * Input that PostgreSQL refuses. A `text` value cannot hold U+0000 (NUL), so a NUL anywhere in
 * a client's input is refused at the edge as a malformed request (issue 16) rather than left to
 * fail in the database. Whatever still reaches the database and fails there because of the
 * value a client sent (too long, malformed, out of range) is a data exception, also the
 * client's doing: `isInputDataError` lets each endpoint family answer it with its 4xx.
 */

export function hasNul(value: string): boolean {
  return value.includes("\u0000");
}

/**
 * Whether a parsed JSON value nests arrays and objects deeper than `max` levels. Iterative, so a
 * body of a few kilobytes of brackets cannot exhaust the stack here; the readers that refuse such
 * bodies first (the management API) can then walk what they accept recursively (`findNul`, the
 * validators).
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const pending: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
  for (let item = pending.pop(); item; item = pending.pop()) {
    if (!item.v || typeof item.v !== "object") continue;
    if (item.depth >= max) return true;
    for (const child of Array.isArray(item.v) ? item.v : Object.values(item.v)) pending.push({ v: child, depth: item.depth + 1 });
  }
  return false;
}

/** Whether any string in a parsed JSON value (keys included) holds a NUL: the path of the first, or null. */
export function findNul(value: unknown, path: string[] = []): string[] | null {
  if (typeof value === "string") return hasNul(value) ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = findNul(value[i], [...path, String(i)]);
      if (p) return p;
    }
    return null;
  }
  if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (hasNul(k)) return [...path, k];
      const p = findNul(v, [...path, k]);
      if (p) return p;
    }
  }
  return null;
}

/**
 * PostgreSQL's SQLSTATE class 22 (data exception: invalid text, NUL, value too long, out of
 * range) and 54000 (a value too large for an index), from node-postgres or PGlite, also when a
 * query builder wrapped the driver's error as its `cause`.
 */
export function isInputDataError(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === "string" && (/^22[0-9A-Z]{3}$/.test(e.code) || e.code === "54000")) return true;
  }
  return false;
}
