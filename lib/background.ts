import type { Logger } from "./log";

/**
 * Work a request starts but does not wait for, owned by the engine: `close()` waits for what is
 * running, so no task outlives its database. Used where the time of an answer must not tell
 * anything: the password-reset request and the mails of a registration take as long whether or
 * not an account exists, because the work that differs happens here, after the answer.
 * A task that fails is logged (without its error's text, which may name an address) and
 * forgotten; the request it came from has already answered.
 */
export class BackgroundTasks {
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly log: Logger) {}

  /** Starts `task` now; returns at once. After close(), the task runs no more. */
  run(name: string, task: () => Promise<unknown>): void {
    if (this.closed) {
      this.log.warn({ task: name }, "background task after close, not run");
      return;
    }
    const p: Promise<void> = Promise.resolve()
      .then(task)
      .then(
        () => {},
        (err: unknown) => {
          this.log.error({ task: name, errClass: err instanceof Error ? err.name : typeof err }, "background task failed");
        },
      )
      .finally(() => this.running.delete(p));
    this.running.add(p);
  }

  /** Resolves once no task is running, including tasks started while waiting. */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running]);
  }

  /** Refuses new tasks and waits for the running ones. */
  async close(): Promise<void> {
    this.closed = true;
    await this.idle();
  }
}
