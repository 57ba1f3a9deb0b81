/**
 * Whether some tables may have been written since a moment, for a database that only this
 * process writes: PGlite (one process per data folder; IDP_WORKERS refuses more). The client
 * shows the watch the text of every statement as it is sent, before it runs, and the watch counts
 * those that may write one of its tables. A read that noted the count before it was sent, and
 * finds it unchanged later, is still what the database would answer: nothing that could change
 * it has been sent since, and on PGlite's one connection nothing else writes.
 *
 * Why statements and not the store's write functions: a write added anywhere later, in SQL or
 * through Drizzle, is seen without anyone remembering to invalidate. The test is deliberately
 * broad (any INSERT, UPDATE, DELETE, MERGE or TRUNCATE naming the table, any DDL), and each
 * distinct text is tested once: the store sends a few shapes over and over.
 */
export class WriteWatch {
  private count = 0;
  private readonly pattern: RegExp;
  private readonly verdicts = new Map<string, boolean>();

  constructor(tables: readonly string[]) {
    const names = tables.map((t) => t.replace(/[^a-z_]/g, "")).join("|");
    // `UPDATE "sessions"`, `insert into public.users`, `DELETE FROM ONLY "public"."user_agents"`,
    // also inside a CTE; and schema changes, which only migrations make.
    this.pattern = new RegExp(
      `\\b(?:(?:insert\\s+into|update|delete\\s+from|merge\\s+into|truncate(?:\\s+table)?)\\s+(?:only\\s+)?(?:"?public"?\\.)?"?(?:${names})"?(?![\\w$])|(?:alter|drop|create)\\s+table)`,
      "i",
    );
  }

  /** A statement is being sent (or sent again). */
  sent(text: string): void {
    let writes = this.verdicts.get(text);
    if (writes === undefined) {
      writes = this.pattern.test(text);
      // Texts with values spelled in them would be new every time: only so many are remembered.
      if (this.verdicts.size >= 1000) this.verdicts.clear();
      this.verdicts.set(text, writes);
    }
    if (writes) this.count++;
  }

  /** Changes whenever a statement that may write a watched table has been sent. */
  version(): number {
    return this.count;
  }
}
