import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module script without types
import { SERVER_OLD_SPACE_MB, serverEnv, serverNodeArgs, serverThreadPoolSize, serverV8PoolSize } from "../scripts/server-node-options.mjs";

/**
 * The bound on V8's old generation and the number of V8's helper threads that `npm start` and the
 * bench give the server, unless the operator sets them.
 */
describe("serverNodeArgs", () => {
  it("bounds the old generation at 384 MB and gives V8 one helper thread fewer than the cores", () => {
    expect(SERVER_OLD_SPACE_MB).toBe(384);
    expect(serverNodeArgs({}, 2)).toEqual(["--max-old-space-size=384", "--v8-pool-size=1"]);
    expect(serverNodeArgs({ NODE_OPTIONS: "--enable-source-maps" }, 8)).toEqual(["--max-old-space-size=384", "--v8-pool-size=4"]);
  });

  it("adds neither flag that NODE_OPTIONS sets, in either spelling Node accepts", () => {
    expect(serverNodeArgs({ NODE_OPTIONS: "--enable-source-maps --max-old-space-size=1024" }, 2)).toEqual(["--v8-pool-size=1"]);
    expect(serverNodeArgs({ NODE_OPTIONS: "--max_old_space_size=512" }, 2)).toEqual(["--v8-pool-size=1"]);
    expect(serverNodeArgs({ NODE_OPTIONS: "--v8-pool-size=6" }, 2)).toEqual(["--max-old-space-size=384"]);
    expect(serverNodeArgs({ NODE_OPTIONS: "--v8_pool_size=2 --max-old-space-size=900" }, 2)).toEqual([]);
  });

  it("sizes V8's helpers as the cores less one, at least 1 and at most Node's default of 4", () => {
    expect([1, 2, 3, 4, 5, 64].map((cores) => serverV8PoolSize(cores))).toEqual([1, 1, 2, 3, 4, 4]);
  });
});

/** The size of libuv's thread pool, where RS256 signatures run: one thread per core, at least 2, unless the operator sets it. */
describe("serverEnv", () => {
  it("sizes the thread pool by the cores, at least 2 and at most libuv's 1024", () => {
    expect(serverThreadPoolSize(1)).toBe(2);
    expect(serverThreadPoolSize(2)).toBe(2);
    expect(serverThreadPoolSize(16)).toBe(16);
    expect(serverThreadPoolSize(4096)).toBe(1024);
    expect(serverEnv({ PORT: "3000" }, 8)).toEqual({ PORT: "3000", UV_THREADPOOL_SIZE: "8" });
  });

  it("keeps the operator's UV_THREADPOOL_SIZE and leaves the given environment unchanged", () => {
    const env = { UV_THREADPOOL_SIZE: "12" };
    expect(serverEnv(env, 2)).toEqual({ UV_THREADPOOL_SIZE: "12" });
    const bare: Record<string, string> = {};
    serverEnv(bare, 2);
    expect(bare).toEqual({});
  });
});
