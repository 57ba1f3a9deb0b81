import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { AsyncLocalStorage, executionAsyncResource } from "node:async_hooks";
import { afterEach, describe, expect, it } from "vitest";
import { switchOffIdleAsyncContexts, type IdleAsyncContexts } from "@/lib/server/idle-async-context";

// What Next and React do: take the class from `require("node:async_hooks")` or from globalThis.
const requireHere = createRequire(import.meta.url);
const fromAsyncHooks = () => (requireHere("node:async_hooks") as typeof import("node:async_hooks")).AsyncLocalStorage;
const fromGlobal = () => (globalThis as unknown as { AsyncLocalStorage: typeof AsyncLocalStorage }).AsyncLocalStorage;

const IDLE = 30;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether Node's async hooks run at promises now: an awaiting function then runs inside the promise's resource. */
async function hooksOn(): Promise<boolean> {
  await Promise.resolve();
  return executionAsyncResource() instanceof Promise;
}

/** A response that closes when `close()` is called, as a ServerResponse does once it is done. */
function response(): ServerResponse & { close(): void } {
  const res = new EventEmitter() as unknown as ServerResponse & { close(): void };
  res.close = () => void res.emit("close");
  return res;
}
/** Closes a response made by `response()`, from inside a handler. */
const close = (res: ServerResponse) => {
  (res as ReturnType<typeof response>).close();
};
const request = new EventEmitter() as unknown as IncomingMessage;

/** A page: reads its store after an await inside `run`, as Next reads its request's. */
function page(als: AsyncLocalStorage<{ page: number }>, n: number, seen: unknown[]) {
  return als.run({ page: n }, async () => {
    await Promise.resolve();
    await new Promise((r) => setImmediate(r));
    seen.push(als.getStore());
  });
}

/** The store a context made now sees after `ms`. */
function storeSeenLater<T>(als: AsyncLocalStorage<T>, store: T, ms: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    als.run(store, () => {
      setTimeout(() => {
        resolve(als.getStore());
      }, ms);
    });
  });
}

let contexts: IdleAsyncContexts | undefined;
afterEach(() => {
  contexts?.uninstall();
  contexts = undefined;
});

describe("Next's AsyncLocalStorage instances are switched off while no page is in flight", () => {
  it("instances made from node:async_hooks and from globalThis are switched off after the idle time, and the next page switches them on", async () => {
    // With nothing enabled, an async function runs without the hooks (Node 20 and 22).
    const hooksToBeginWith = await hooksOn();
    contexts = switchOffIdleAsyncContexts({ idleMs: IDLE });
    const a = new (fromAsyncHooks())<{ page: number }>();
    const b = new (fromGlobal())<{ page: number }>();
    expect(a).toBeInstanceOf(AsyncLocalStorage);
    expect(b).toBeInstanceOf(AsyncLocalStorage);

    const seen: unknown[] = [];
    const serve = contexts.serving(async (_req, res) => {
      await page(a, 1, seen);
      await page(b, 1, seen);
      close(res);
    });
    // A context made during a page, still waiting when the server falls idle.
    const later = storeSeenLater(a, { page: 0 }, IDLE * 4);
    await serve(request, response());
    expect(seen).toEqual([{ page: 1 }, { page: 1 }]);
    if (!hooksToBeginWith) expect(await hooksOn()).toBe(true);

    await sleep(IDLE * 2);
    // Switched off: the hooks are off again, and the waiting context no longer sees its store.
    if (!hooksToBeginWith) expect(await hooksOn()).toBe(false);
    expect(await later).toBeUndefined();

    // The next page runs as the first did: `run` enables the instance again.
    await serve(request, response());
    expect(seen).toEqual([{ page: 1 }, { page: 1 }, { page: 1 }, { page: 1 }]);
    expect(await storeSeenLater(b, { page: 2 }, 1)).toEqual({ page: 2 });
  });

  it("nothing is switched off while a page is in flight: its handler has not settled, or its response has not closed", async () => {
    contexts = switchOffIdleAsyncContexts({ idleMs: IDLE });
    const a = new (fromAsyncHooks())<string>();
    let finish!: () => void;
    const handlerDone = new Promise<void>((r) => (finish = r));
    const serve = contexts.serving(async () => {
      await a.run("page", async () => {
        await handlerDone;
      });
    });
    const res = response();
    const served = serve(request, res);
    expect(await storeSeenLater(a, "waiting", IDLE * 3)).toBe("waiting");

    // The handler returned, the response is still streaming.
    finish();
    await served;
    expect(await storeSeenLater(a, "streaming", IDLE * 3)).toBe("streaming");

    // Closed: after the idle time it is switched off.
    res.close();
    expect(await storeSeenLater(a, "closed", IDLE * 3)).toBeUndefined();
  });

  it("a response closed early (its client gone) while the handler still runs keeps the instances on until the handler settles", async () => {
    contexts = switchOffIdleAsyncContexts({ idleMs: IDLE });
    const a = new (fromAsyncHooks())<string>();
    let finish!: () => void;
    const handlerDone = new Promise<void>((r) => (finish = r));
    const res = response();
    const served = contexts.serving(async () => {
      await a.run("page", async () => {
        res.close();
        await handlerDone;
      });
    })(request, res);
    expect(await storeSeenLater(a, "rendering", IDLE * 3)).toBe("rendering");
    finish();
    await served;
    expect(await storeSeenLater(a, "after", IDLE * 3)).toBeUndefined();
  });

  it("a page that starts before the idle time has passed keeps the instances on", async () => {
    contexts = switchOffIdleAsyncContexts({ idleMs: IDLE * 3 });
    const a = new (fromAsyncHooks())<string>();
    const serve = contexts.serving((_req, res) => {
      a.run("page", () => undefined);
      close(res);
    });
    await serve(request, response());
    const later = storeSeenLater(a, "kept", IDLE * 4);
    await sleep(IDLE * 2);
    await serve(request, response()); // restarts the idle time
    expect(await later).toBe("kept");
  });

  it("a handler that throws still counts as finished once its response has closed", async () => {
    contexts = switchOffIdleAsyncContexts({ idleMs: IDLE });
    const a = new (fromAsyncHooks())<string>();
    const serve = contexts.serving((_req, res) => {
      a.run("page", () => undefined);
      close(res);
      throw new Error("render failed");
    });
    await expect(serve(request, response())).rejects.toThrow("render failed");
    expect(await storeSeenLater(a, "after", IDLE * 3)).toBeUndefined();
  });

  it("instances made before installing (the engine's own) are left alone", async () => {
    const own = new AsyncLocalStorage<string>();
    contexts = switchOffIdleAsyncContexts({ idleMs: IDLE });
    const serve = contexts.serving((_req, res) => {
      close(res);
    });
    const later = storeSeenLater(own, "engine", IDLE * 3);
    await serve(request, response());
    expect(await later).toBe("engine");
  });

  it("uninstall gives node:async_hooks and globalThis their classes back", () => {
    const before = fromGlobal();
    contexts = switchOffIdleAsyncContexts({ idleMs: IDLE });
    expect(fromAsyncHooks()).not.toBe(AsyncLocalStorage);
    expect(fromGlobal()).toBe(fromAsyncHooks());
    contexts.uninstall();
    contexts = undefined;
    expect(fromAsyncHooks()).toBe(AsyncLocalStorage);
    expect(fromGlobal()).toBe(before);
  });
});
