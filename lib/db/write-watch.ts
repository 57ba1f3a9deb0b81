/**
 * Whether a read may have been changed by a write since a moment, for a database that only this
 * process writes: PGlite (one process per data folder; IDP_WORKERS refuses more). The client
 * shows the watch the text of every statement as it is sent, before it runs, and the watch counts
 * those that may write a table the read depends on. A read that noted the count before it was
 * sent, and finds it unchanged later, is still what the database would answer: nothing that could
 * change it has been sent since, and on PGlite's one connection nothing else writes.
 *
 * Why statements and not the store's write functions: a write added anywhere later, in SQL or
 * through Drizzle, is seen without anyone remembering to invalidate. And why a list of the tables
 * that cannot matter rather than of those that do: what is not recognised counts as a change. A
 * statement counts unless every table it writes (INSERT INTO, UPDATE, DELETE FROM, MERGE INTO) is
 * one of `unaffected`; any TRUNCATE, COPY and schema change counts. So a new table, a spelling this
 * parse does not follow, or a table written through a cascade from one not listed, costs a read,
 * never a stale answer. Each distinct text is looked at once: the store sends a few shapes over
 * and over.
 */
export class WriteWatch {
  private count = 0;
  private readonly unaffected: ReadonlySet<string>;
  private readonly verdicts = new Map<string, boolean>();

  /** `unaffected`: tables whose writes cannot change the watched read (lower case, unquoted). */
  constructor(unaffected: readonly string[]) {
    this.unaffected = new Set(unaffected);
  }

  /** A statement is being sent (or sent again). Returns whether it counted. */
  sent(text: string): boolean {
    let writes = this.verdicts.get(text);
    if (writes === undefined) {
      writes = this.mayChange(text);
      // Texts with values spelled in them would be new every time: only so many are remembered.
      if (this.verdicts.size >= 1000) this.verdicts.clear();
      this.verdicts.set(text, writes);
    }
    if (writes) this.count++;
    return writes;
  }

  /** Changes whenever a statement that may change the watched read has been sent. */
  version(): number {
    return this.count;
  }

  /**
   * Whether a read may be remembered now and a remembered one answered again. Always, where this
   * process is the only writer; see write-notices.ts for PostgreSQL.
   */
  canRemember(): boolean {
    return true;
  }

  /** Counts a change that `sent` could not see (write-notices.ts). */
  protected changed(): void {
    this.count++;
  }

  /** Whether a write to `table` may change the watched read. */
  protected matters(table: string): boolean {
    return !this.unaffected.has(table);
  }

  private mayChange(text: string): boolean {
    if (ANY_TABLES.test(text)) return true;
    for (const m of text.matchAll(WRITE_TARGET)) {
      const name = tableName(m[1]!);
      if (NOT_A_TARGET.has(name)) continue;
      if (!this.unaffected.has(name)) return true;
    }
    return false;
  }
}

/** TRUNCATE may name several tables; schema changes may change anything. */
const ANY_TABLES = /\b(?:truncate|alter|drop|create|copy)\s/i;

/** The table after a write's keyword: `"sessions"`, `public.users`, `ONLY "public"."user_agents"`. */
const WRITE_TARGET = /\b(?:insert\s+into|update|delete\s+from|merge\s+into)\s+(?:only\s+)?((?:"[^"]*"|[a-z_][\w$]*)(?:\s*\.\s*(?:"[^"]*"|[a-z_][\w$]*))?)/gi;

/** What follows UPDATE when it is not a statement: `ON CONFLICT … DO UPDATE SET`, `FOR UPDATE OF`, `SKIP LOCKED`, `NOWAIT`. */
const NOT_A_TARGET = new Set(["set", "of", "skip", "nowait"]);

function tableName(spelled: string): string {
  const last = spelled.split(/\s*\.\s*(?=(?:"[^"]*"|[a-z_][\w$]*)$)/i).at(-1)!;
  return last.startsWith('"') ? last.slice(1, -1) : last.toLowerCase();
}
