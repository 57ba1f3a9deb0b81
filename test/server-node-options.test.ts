import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module script without types
import { SERVER_OLD_SPACE_MB, serverNodeArgs } from "../scripts/server-node-options.mjs";

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
