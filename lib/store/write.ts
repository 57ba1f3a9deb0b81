import type { Statement } from "./statement";

/**
 * A write built but not yet sent: the statement, and what its caller learns from it (ids and
 * values made here, not by the database). Built this way, a write can run on its own
 * (`runWrite`) or as part of one statement with others (`WriteBatch`).
 */
export type Write<R> = { query: Statement; result: R };

/**
 * A write that decides whether the rest may happen: marking a code used, rotating a refresh
 * token, recording an assertion's `jti`. It returns the rows it changed; none means another
 * request got there first.
 */
export type GuardWrite = { guard: Statement };

export async function runWrite<R>(w: Write<R>): Promise<R> {
  await w.query;
  return w.result;
}

export async function runGuard(w: GuardWrite): Promise<boolean> {
  return (await w.guard).length === 1;
}

/**
 * Thrown inside `WriteBatch` mode when the work needs what one statement cannot give: a write
 * that is not a plain insert or guard (a revocation), or a read of what it has written already.
 * The caller runs the work again in a transaction.
 */
export class NeedsTransaction extends Error {
  constructor(what: string) {
    super(`needs a transaction: ${what}`);
  }
}

// SQLSTATE division_by_zero: how the batch's statement refuses itself when a guard lost (below).
const GUARD_LOST = "22012";

/** Whether `e` is the batch statement refusing itself because a guard changed no row. */
export function isGuardLost(e: unknown): boolean {
  const err = e as { code?: unknown; cause?: { code?: unknown } } | null;
  return err?.code === GUARD_LOST || err?.cause?.code === GUARD_LOST;
}

/**
 * The writes of one unit of work, sent as one statement: each is a data-modifying CTE
 * (`WITH w0 AS (UPDATE …), w1 AS (INSERT …) …`). A single statement is atomic by itself, so the
 * unit needs no BEGIN and COMMIT, and costs one round trip instead of one per write plus two.
 *
 * Guards are answered "won" while the work runs, and checked when the statement runs: its final
 * SELECT divides by the number of rows each guard changed, so a guard that changed none makes the
 * whole statement fail with division_by_zero and nothing of it is written (PostgreSQL runs every
 * data-modifying CTE once and to completion, and an error undoes the statement). The caller then
 * runs the work again in a real transaction, where the guard answers "lost" and the work takes its
 * path for that (a replayed code, a reused refresh token). Losing happens only to concurrent
 * presentations of one code or token, so the second run is rare.
 *
 * Rows inserted by one CTE may be referenced by another's foreign key: PostgreSQL checks foreign
 * keys at the end of the statement.
 */
export class WriteBatch {
  private readonly writes: { statement: Statement; guard: boolean }[] = [];

  get empty(): boolean {
    return this.writes.length === 0;
  }

  add<R>(w: Write<R>): Promise<R> {
    this.writes.push({ statement: w.query, guard: false });
    return Promise.resolve(w.result);
  }

  /** Queues the guard and answers that it won; the statement checks that it did. */
  guard(w: GuardWrite): Promise<boolean> {
    this.writes.push({ statement: w.guard, guard: true });
    return Promise.resolve(true);
  }

  /**
   * Sends the writes as one statement through `send` (the driver, without Drizzle: the texts are
   * built already); throws what `isGuardLost` recognises when a guard lost.
   */
  async flush(send: (text: string, params: unknown[]) => Promise<unknown>): Promise<void> {
    if (!this.writes.length) return;
    const only = this.writes.length === 1 ? this.writes[0]! : undefined;
    if (only && !only.guard) {
      await send(only.statement.text, only.statement.params);
      return;
    }
    const shape = this.writes.map((w) => (w.guard ? "guard " : "") + w.statement.key).join("; ");
    let text = batchTexts.get(shape);
    if (text === undefined) {
      text = batchText(this.writes);
      batchTexts.set(shape, text);
    }
    await send(text, this.writes.flatMap((w) => w.statement.params));
  }
}

/**
 * The text of one batch by its shape (its statements' keys in order). Module-level for the same
 * reason as the statement templates (statement.ts): it follows from the code alone. Few shapes
 * exist: one or two per grant.
 */
const batchTexts = new Map<string, string>();

/** `WITH w0 AS (…), w1 AS (…) SELECT 1 / (SELECT count(*) FROM w<guard>)…`, parameters numbered on. */
function batchText(writes: { statement: Statement; guard: boolean }[]): string {
  let offset = 0;
  const ctes = writes.map((w, i) => {
    const at = offset;
    offset += w.statement.params.length;
    return `w${i} AS (${w.statement.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + at}`)})`;
  });
  const checks = writes.flatMap((w, i) => (w.guard ? [`1 / (SELECT count(*) FROM w${i})`] : []));
  return `WITH ${ctes.join(", ")} SELECT ${checks.length ? checks.join(", ") : "1"}`;
}
