import asyncHooks from "node:async_hooks";
import type { NextRequestHandler } from "./create-server";

/** How long no page has been in flight before Next's contexts are switched off. */
const IDLE_MS = 1_000;

export interface IdleAsyncContexts {
  /** Next's request handler, counting the requests it has in flight. */
  serving(handler: NextRequestHandler): NextRequestHandler;
  /** Gives `node:async_hooks` and `globalThis` their own class back (tests). */
  uninstall(): void;
}

/**
 * Switches off the `AsyncLocalStorage` instances of Next and React while no page is in flight.
 *
 * Why: on Node 20 and 22, an enabled `AsyncLocalStorage` turns on async hooks for the whole
 * process, and an instance stays enabled until it is disabled. Next and React make nine, enable
 * those a page uses (five in a sign-in) and never disable them, so from then on every promise
 * and callback of every request runs the hooks, the token endpoint's included, which never uses
 * them. A promise then costs about 230 to 460 ns instead of 30 to 55, and a client credentials
 * request about a seventh more CPU (README, "Benchmark"). A disabled instance enables itself again
 * at its next `run`, which is how Next starts every request, so switching them off between pages
 * changes nothing Next relies on: once no page has been in flight for `idleMs`, no store of
 * theirs is being read. On Node 24 `AsyncLocalStorage` uses no hooks, and this changes nothing.
 *
 * How: Next and React make their instances from `globalThis.AsyncLocalStorage` (which Next only
 * sets where nothing has) or `require("node:async_hooks").AsyncLocalStorage`. Both are pointed at
 * a subclass that remembers each instance it makes, and that behaves as its parent in every
 * other way. So this must be installed before Next is loaded, and only instances made after it are
 * switched off: the engine's own (the round-trip counter) are made earlier and left alone.
 */
export function switchOffIdleAsyncContexts({ idleMs = IDLE_MS }: { idleMs?: number } = {}): IdleAsyncContexts {
  const Original = asyncHooks.AsyncLocalStorage;
  const hadGlobal = Object.prototype.hasOwnProperty.call(globalThis, "AsyncLocalStorage");
  const previousGlobal = (globalThis as { AsyncLocalStorage?: unknown }).AsyncLocalStorage;
  // Weak: an instance nothing else holds can still be collected.
  const made = new Set<WeakRef<asyncHooks.AsyncLocalStorage<unknown>>>();

  class RememberedAsyncLocalStorage<T> extends Original<T> {
    // Whatever the parent takes (Node 22 and later accept options).
    constructor(...args: ConstructorParameters<typeof Original>) {
      super(...args);
      made.add(new WeakRef(this));
    }
  }
  setClass(RememberedAsyncLocalStorage);
  (globalThis as { AsyncLocalStorage?: unknown }).AsyncLocalStorage = RememberedAsyncLocalStorage;

  let inFlight = 0;
  let timer: NodeJS.Timeout | undefined;
  const switchOff = () => {
    timer = undefined;
    if (inFlight > 0) return;
    for (const ref of made) {
      const instance = ref.deref();
      if (instance) instance.disable();
      else made.delete(ref);
    }
  };
  const finished = () => {
    if (--inFlight === 0) timer = setTimeout(switchOff, idleMs).unref();
  };

  return {
    serving(handler) {
      return async (req, res) => {
        inFlight++;
        clearTimeout(timer);
        // Done when Next's handler has settled and the response is closed (or its client gone),
        // whichever comes last: a streamed page is still rendering after the handler returns.
        let parts = 2;
        const partDone = () => {
          if (--parts === 0) finished();
        };
        res.once("close", partDone);
        try {
          await handler(req, res);
        } finally {
          partDone();
        }
      };
    },
    uninstall() {
      clearTimeout(timer);
      setClass(Original);
      if (hadGlobal) (globalThis as { AsyncLocalStorage?: unknown }).AsyncLocalStorage = previousGlobal;
      else delete (globalThis as { AsyncLocalStorage?: unknown }).AsyncLocalStorage;
    },
  };
}

/** What `require("node:async_hooks").AsyncLocalStorage` gives from now on. */
function setClass(cls: typeof asyncHooks.AsyncLocalStorage): void {
  (asyncHooks as { AsyncLocalStorage: typeof asyncHooks.AsyncLocalStorage }).AsyncLocalStorage = cls;
}
