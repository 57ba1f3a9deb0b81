import { WriteWatch } from "./write-watch";

/** The channel on which PostgreSQL's triggers name each table written (migration 0018). */
export const WRITE_NOTICE_CHANNEL = "torii_writes";

/**
 * How long after this process sends a write that may change the watched read nothing is
 * remembered nor answered from memory: the time the write may take to commit, after which the
 * database's own notice (below) is on its way. A write that commits later than this is covered by
 * its notice alone.
 */
export const SETTLE_MS = 2000;

/**
 * The write watch on PostgreSQL, where other processes and instances write too. Statements this
 * process sends count as on PGlite (`sent`), and so do the notices PostgreSQL sends on commit of
 * every statement that writes a watched table, from any connection (`noticed`: a statement-level
 * trigger on each table the read depends on, delivered on the instance's own listening connection,
 * write-notices' migration). Two gaps are closed by not remembering at all while they are open:
 * - between this process sending a write and its commit, a read on another pooled connection
 *   still sees the old rows: for `SETTLE_MS` after such a write, nothing is remembered;
 * - while the listening connection is down, notices are lost: nothing is remembered until it is
 *   back, and what was remembered before counts as changed.
 * What remains is a notice's delivery time after another instance's commit (milliseconds), the
 * same bound as the other caches' cross-instance invalidation (lib/store/invalidation.ts).
 */
export class NoticedWriteWatch extends WriteWatch {
  private listening = false;
  private settledAt = 0;

  constructor(
    unaffected: readonly string[],
    private readonly now: () => number = () => performance.now(),
  ) {
    super(unaffected);
  }

  override sent(text: string): boolean {
    const counted = super.sent(text);
    if (counted) this.settledAt = this.now() + SETTLE_MS;
    return counted;
  }

  /** PostgreSQL's notice that a statement writing `table` committed. */
  noticed(table: string): void {
    if (this.matters(table)) this.changed();
  }

  /** The listening connection is up (notices arrive) or down (they may be lost). */
  setListening(on: boolean): void {
    this.changed();
    this.listening = on;
  }

  override canRemember(): boolean {
    return this.listening && this.now() >= this.settledAt;
  }
}
