import { describe, expect, it } from "vitest";
import { BackgroundTasks } from "@/lib/background";
import { createLogger } from "@/lib/log";

// The engine's background work: the caller does not wait, close() does, and a failure is only logged.
describe("background tasks", () => {
  it("run without the caller waiting; close waits for the running ones and refuses new ones (even one a running task starts); a failure is only logged", async () => {
    const tasks = new BackgroundTasks(createLogger("silent"));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const done: string[] = [];
    tasks.run("first", async () => {
      await gate;
      done.push("first");
      tasks.run("second", () => {
        done.push("second");
        return Promise.resolve();
      });
    });
    tasks.run("failing", () => Promise.reject(new Error("boom")));
    expect(done).toEqual([]);
    let closed = false;
    const closing = tasks.close().then(() => (closed = true));
    // Several turns of the event loop: close is still waiting for the held task.
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    release();
    await closing;
    expect(done).toEqual(["first"]);
    tasks.run("late", () => {
      done.push("late");
      return Promise.resolve();
    });
    await tasks.idle();
    expect(done).toEqual(["first"]);
  });
});
