import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module script without types
import { SERVER_OLD_SPACE_MB, serverEnv, serverNodeArgs, serverThreadPoolSize } from "../scripts/server-node-options.mjs";

/** The bound on V8's old generation that `npm start` and the bench give the server, unless the operator sets one. */
describe("serverNodeArgs", () => {
  it("bounds the old generation at 384 MB by default", () => {
    expect(SERVER_OLD_SPACE_MB).toBe(384);
    expect(serverNodeArgs({})).toEqual(["--max-old-space-size=384"]);
    expect(serverNodeArgs({ NODE_OPTIONS: "--enable-source-maps" })).toEqual(["--max-old-space-size=384"]);
  });

  it("adds nothing when NODE_OPTIONS sets the bound, in either spelling V8 accepts", () => {
    expect(serverNodeArgs({ NODE_OPTIONS: "--enable-source-maps --max-old-space-size=1024" })).toEqual([]);
    expect(serverNodeArgs({ NODE_OPTIONS: "--max_old_space_size=512" })).toEqual([]);
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
